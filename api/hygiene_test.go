package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// No raw tab id, cookie or token ever appears in any API output or log
// line: a task with a recorded tab (recognizable TargetID) is read through
// every endpoint, with both tokens, errors included.
func TestNoTabIDCookieOrTokenInOutput(t *testing.T) {
	const (
		rawTabID = "RAWTAB-7f3e9a1c5b2d4e6f-SECRET"
		cookie   = "sessionid=COOKIE-c0ffee-SECRET"
	)
	var e *env
	e = newEnv(t, func(o *Options) {
		o.Status = func(ctx context.Context) (any, error) {
			return e.db.Status(ctx, "operator", budgets.Policy{})
		}
	})
	e.start()
	st := e.create("hyg", createBody("hygiene"))
	f := e.fence()
	if _, err := e.db.RecordTab(e.ctx, f, ledger.Tab{TaskID: st.ID, TargetID: rawTabID, URL: "http://127.0.0.1:8787/compose",
		BindingHash: "binding"}); err != nil {
		t.Fatal(err)
	}
	if tabs, err := e.db.ListTabs(e.ctx, st.ID); err != nil || len(tabs) != 1 || tabs[0].TargetID != rawTabID {
		t.Fatalf("the tab is not recorded: %v %v", tabs, err)
	}
	amb := e.reserve(f, st.ID, "ambiguous one")
	e.ambiguous(f, amb.ID)
	pending := e.reserve(f, st.ID, "pending one")
	if _, err := e.db.RequestConfirmation(e.ctx, f, pending.ID); err != nil {
		t.Fatal(err)
	}

	hdr := func(extra map[string]string) map[string]string {
		h := map[string]string{"Cookie": cookie}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	calls := []req{
		{method: "GET", path: "/v1/tasks/" + st.ID},
		{method: "GET", path: "/v1/tasks"},
		{method: "GET", path: "/v1/tasks?limit=5"},
		{method: "GET", path: "/v1/status"},
		{method: "GET", path: "/v1/openapi.json"},
		{method: "POST", path: "/v1/tasks", body: createBody("hygiene"), header: map[string]string{"Idempotency-Key": "hyg"}},
		{method: "POST", path: "/v1/tasks/" + st.ID + "/actions", body: intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "hi"}},
		{method: "POST", path: "/v1/tasks/" + st.ID + "/grants", body: GrantRequest{Domain: "localhost"}},
		{method: "POST", path: "/v1/actions/" + pending.ID + "/confirm", body: ConfirmRequest{Decision: "confirm"}},
		{method: "POST", path: "/v1/actions/" + amb.ID + "/resolve", body: ResolveRequest{VerifiedURL: "http://127.0.0.1:8787/p/1"}},
		{method: "POST", path: "/v1/tasks/" + st.ID + "/cancel"},
		{method: "GET", path: "/v1/tasks/" + st.ID},
	}
	for _, tok := range []string{e.agent, e.user} {
		for _, q := range calls {
			q.token, q.header = tok, hdr(q.header)
			r := e.do(q)
			if r.status >= 500 {
				t.Fatalf("%s %s: %d %s", q.method, q.path, r.status, r.body)
			}
		}
	}
	// Error answers too.
	for _, q := range []req{
		{method: "GET", path: "/v1/tasks/" + st.ID, token: "wrong"},
		{method: "GET", path: "/v1/tasks/" + st.ID + "?token=" + e.user},
		{method: "GET", path: "/v1/tasks/" + st.ID, token: e.agent, host: "evil.example"},
		{method: "POST", path: "/v1/tasks/" + st.ID + "/actions", token: e.agent, body: `{"site": "demo", "cookie": "` + cookie + `"}`},
	} {
		q.header = hdr(q.header)
		e.do(q)
	}
	// The state still tells everything an agent needs about the task.
	r := e.do(req{method: "GET", path: "/v1/tasks/" + st.ID, token: e.agent})
	want(t, r, http.StatusOK, "")
	var got tasks.State
	r.into(t, &got)
	if len(got.Actions) != 2 || got.Status != "cancelled" {
		t.Fatalf("state %+v", got)
	}

	e.mu.Lock()
	outputs := append([]string(nil), e.outputs...)
	e.mu.Unlock()
	if len(outputs) < 2*len(calls) {
		t.Fatalf("only %d outputs", len(outputs))
	}
	secrets := map[string]string{"raw tab id": rawTabID, "cookie": "COOKIE-c0ffee", "user token": e.user, "agent token": e.agent,
		"user token body": strings.TrimPrefix(e.user, userTokenPrefix), "agent token body": strings.TrimPrefix(e.agent, agentTokenPrefix)}
	for _, out := range outputs {
		for what, s := range secrets {
			if strings.Contains(out, s) {
				t.Fatalf("an API answer holds the %s:\n%s", what, out)
			}
		}
		if strings.Contains(strings.ToLower(out), "set-cookie") {
			t.Fatalf("an API answer sets a cookie:\n%s", out)
		}
	}
	logs := e.logs.String()
	for what, s := range secrets {
		if strings.Contains(logs, s) {
			t.Fatalf("the log holds the %s", what)
		}
	}
}
