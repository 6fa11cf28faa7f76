package operator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/api"
	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/mcptools"
	"github.com/browserop/browserop/sites"
)

// siteMarker is what demosite's rate-limit page says (h1#rate-limited),
// which the demo adapter reads as the refusal's message: page text no
// string of browserop's own holds.
const siteMarker = "Slow down"

// TestSiteWordsStayWithThePerson (docs/api.md, "What leaves the
// machine"): the site refuses a task's post at its click (demosite's
// rate limit, switched on between the fill and the click, answered by
// its own page and read by the real demo adapter in real Chromium). The
// site's message is kept apart from the action's reason: an agent (the
// MCP tools task_state and task_observe, the REST API with the agent
// token) and the operator's log get the class and the fixed reason,
// never the site's words; the person's API (user token) has them.
func TestSiteWordsStayWithThePerson(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	site := &siteAnswers{Adapter: w.site, submit: func(ctx context.Context, tab *browser.Tab, in sites.Intent) (error, bool) {
		require.NoError(t, w.srv.SetFaults(demosite.Faults{RateLimit: true}))
		defer func() { require.NoError(t, w.srv.SetFaults(demosite.Faults{})) }()
		return w.site.Submit(ctx, tab, in), true
	}}
	var logs bytes.Buffer
	w.useRunner(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), site)
	svc := w.tasks()
	task, _, err := svc.Agent().Create(ctx, "refused", w.contract("post"), "mcp")
	require.NoError(t, err)
	_, err = svc.Agent().Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "refused at the click"})
	require.NoError(t, err)

	sum := w.pass()
	require.Equal(t, 1, sum.Counts["refused"], "%v", notes(sum))
	acts, err := w.db.ListActions(ctx, ledger.ActionFilter{TaskID: task.ID})
	require.NoError(t, err)
	require.Len(t, acts, 1)
	a := acts[0]
	require.Equal(t, ledger.Failed, a.Status)
	require.Equal(t, "the site refused the post (rate_limit, status 429); nothing was created", a.FailureReason)
	require.Contains(t, a.FailureSiteWords, siteMarker, "the site's words are recorded, apart")

	// The log: the class and the reason, never the site's words.
	require.Contains(t, logs.String(), "the site refused the post (rate_limit, status 429)")
	require.NotContains(t, logs.String(), siteMarker)

	// The agent's view through the task service, and the person's.
	st, err := svc.Agent().Get(ctx, task.ID)
	require.NoError(t, err)
	require.Equal(t, "the site refused the post (rate_limit, status 429); nothing was created", st.Actions[0].Failure)
	require.Empty(t, st.Actions[0].SiteWords)
	require.Equal(t, "definitive", st.Actions[0].FailureClass)
	// The task's tab record (issue 24 §7): its action ran in the site's
	// tab, whose record the task lists, and task_observe names it; no
	// raw target id anywhere.
	require.Len(t, st.Tabs, 1, "%+v", st.Tabs)
	rec, err := w.db.GetTab(ctx, st.Tabs[0].Record)
	require.NoError(t, err)
	require.Equal(t, string(rec.State), st.Tabs[0].State)
	require.Equal(t, rec.Epoch, st.Tabs[0].Epoch)
	require.Equal(t, 1, st.Tabs[0].FirstEpoch)
	require.Equal(t, w.base, st.Tabs[0].Origin)
	obs, err := svc.Agent().Observe(ctx, task.ID)
	require.NoError(t, err)
	require.NotEqual(t, "none", obs.Tab, "the task's own action's tab")
	require.Equal(t, st.Tabs[0].Record, obs.TabRecord)
	require.Equal(t, string(rec.State), obs.Tab)
	raw, err := json.Marshal([]any{st, obs})
	require.NoError(t, err)
	require.NotEmpty(t, rec.TargetID)
	require.NotContains(t, string(raw), rec.TargetID, "never a raw target id")
	mine, err := svc.Get(ctx, task.ID)
	require.NoError(t, err)
	require.Contains(t, mine.Actions[0].SiteWords, siteMarker)

	// MCP, as an agent reaches it.
	srv := mcptools.NewServer(svc.Agent(), "test")
	stt, ctt := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, stt, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "t"}, nil).Connect(ctx, ctt, nil)
	require.NoError(t, err)
	defer cs.Close()
	for _, tool := range []string{"task_state", "task_observe", "task_list"} {
		args := map[string]any{"task_id": task.ID}
		if tool == "task_list" {
			args = map[string]any{}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err, tool)
		require.False(t, res.IsError, "%s: %+v", tool, res.Content)
		raw, err := json.Marshal(res)
		require.NoError(t, err)
		require.NotContains(t, string(raw), siteMarker, tool)
		if tool == "task_state" {
			require.Contains(t, string(raw), "the site refused the post (rate_limit, status 429)", "the reason reaches the agent")
		}
	}

	// REST: the agent token never sees the site's words; the person's does.
	h := api.New(api.Options{Tasks: svc, UserToken: "user-token-0123456789", AgentToken: "agent-token-0123456789"})
	get := func(token, path string) string {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil)
		r.Host = "127.0.0.1:7465"
		r.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		require.Equal(t, http.StatusOK, rec.Code, "%s %s", path, rec.Body.String())
		body, _ := io.ReadAll(rec.Body)
		return string(body)
	}
	for _, path := range []string{"/v1/tasks/" + task.ID, "/v1/tasks", "/v1/runs", "/v1/runs/" + sum.RunID} {
		require.NotContains(t, get("agent-token-0123456789", path), siteMarker, path)
	}
	require.True(t, strings.Contains(get("user-token-0123456789", "/v1/tasks/"+task.ID), siteMarker), "the person's API shows the site's words")
}
