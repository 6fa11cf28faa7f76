package mcptools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/mcptools"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

// fixture is a real ledger in a temporary directory, a real tasks.Service
// over the bundled demo adapter (origin http://127.0.0.1:8787, so the
// default ceiling is 127.0.0.1) and browserop's MCP server over them.
type fixture struct {
	db     *ledger.DB
	tasks  *tasks.Service
	server *mcp.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := ledger.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	adapters, err := sites.LoadFS(bundled.Sites, "sites")
	require.NoError(t, err)
	var as []sites.Adapter
	for _, a := range adapters {
		as = append(as, a)
	}
	tasks := tasks.New(db, as, nil)
	return &fixture{db: db, tasks: tasks, server: mcptools.NewServer(tasks, "test")}
}

// transports are the ways a client reaches the server in these tests.
var transports = []struct {
	name    string
	connect func(t *testing.T, s *mcp.Server, opts *mcp.ClientSessionOptions) *mcp.ClientSession
}{
	{"inmemory", connectInMemory},
	{"http", connectHTTP},
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "browserop-test", Version: "test"}, nil)
}

func connectInMemory(t *testing.T, s *mcp.Server, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := newClient().Connect(ctx, ct, opts)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

func connectHTTP(t *testing.T, s *mcp.Server, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	hs := httptest.NewServer(mcptools.HTTPHandler(s))
	t.Cleanup(hs.Close)
	cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, opts)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool that must succeed and decodes its structured result.
func call[T any](t *testing.T, cs *mcp.ClientSession, name string, args any) (T, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s: %s", name, text(res))
	var out T
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	// The text content is the same JSON, for clients that read only text.
	require.JSONEq(t, string(raw), text(res))
	return out, res
}

// callErr calls a tool that must fail as a tool error and returns its text.
func callErr(t *testing.T, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "a tool error is a result, not a protocol error")
	require.True(t, res.IsError, "%s must fail; got %s", name, text(res))
	require.Nil(t, res.StructuredContent)
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

type obj = map[string]any

func contract(caps ...string) obj {
	return obj{"domains": []string{"127.0.0.1"}, "capabilities": caps}
}

func TestMCPToolsListed(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, newFixture(t).server, nil)
			res, err := cs.ListTools(context.Background(), nil)
			require.NoError(t, err)
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			require.ElementsMatch(t, []string{"task_create", "task_state", "task_list", "task_submit", "task_cancel", "task_finish", "task_observe", "task_continuity"}, names)
			require.ElementsMatch(t, mcptools.ToolNames, names)

			// Only a person confirms, declines, resolves and grants: no tool
			// offers it, by name, title, description or argument. (An
			// effect state's name, such as needs_confirmation, only reports.)
			offer := regexp.MustCompile(`(?i)confirm|declin|resolv|grant|approv|verif|adopt|settle`)
			states := regexp.MustCompile(`needs_confirmation|waiting_for_confirmation|closed_verified|closure_unverified`)
			for _, tool := range res.Tools {
				for _, s := range []string{tool.Name, tool.Title, tool.Description, tool.Annotations.Title} {
					require.False(t, offer.MatchString(states.ReplaceAllString(s, "")), "tool %s offers what only a person does: %q", tool.Name, s)
				}
				for _, p := range propertyNames(t, tool.InputSchema) {
					// contract.confirm names which capabilities wait for the
					// person; it grants the agent nothing.
					if p == "contract.confirm" {
						continue
					}
					require.False(t, offer.MatchString(p), "tool %s takes %q", tool.Name, p)
				}
				require.NotNil(t, tool.OutputSchema, "tool %s has a typed output", tool.Name)
				require.NotEmpty(t, tool.Description)
			}
		})
	}
}

// propertyNames lists the dotted property paths of a JSON schema.
func propertyNames(t *testing.T, schema any) []string {
	raw, err := json.Marshal(schema)
	require.NoError(t, err)
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(raw, &s))
	var out []string
	for name, sub := range s.Properties {
		out = append(out, name)
		for _, n := range propertyNames(t, sub) {
			out = append(out, name+"."+n)
		}
	}
	return out
}

func TestMCPTaskTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			f := newFixture(t)
			cs := tr.connect(t, f.server, nil)

			// Create, idempotently.
			req := obj{"idempotency_key": "k1", "title": "launch", "contract": contract("post", "reply")}
			task, res := call[tasks.State](t, cs, "task_create", req)
			require.NotEmpty(t, task.ID)
			require.Equal(t, "mcp", task.Source)
			require.Equal(t, ledger.TaskOpen, task.Status)
			require.Equal(t, "launch", task.Title)
			require.Equal(t, []string{"post", "reply"}, task.Contract.Capabilities)
			require.Equal(t, true, res.Meta["browserop/created"])

			again, res := call[tasks.State](t, cs, "task_create", req)
			require.Equal(t, task.ID, again.ID, "same key, same request: the same task")
			require.Equal(t, false, res.Meta["browserop/created"])

			msg := callErr(t, cs, "task_create", obj{"idempotency_key": "k1", "title": "other", "contract": contract("post", "reply")})
			require.True(t, strings.HasPrefix(msg, "conflict: "), msg)
			msg = callErr(t, cs, "task_create", obj{"idempotency_key": "k1", "title": "launch", "contract": contract("post")})
			require.True(t, strings.HasPrefix(msg, "conflict: "), msg)
			list, _ := call[mcptools.TaskList](t, cs, "task_list", obj{})
			require.Len(t, list.Tasks, 1, "a conflict creates nothing")

			// Create: outside the ceiling, malformed.
			msg = callErr(t, cs, "task_create", obj{"idempotency_key": "k2",
				"contract": obj{"domains": []string{"example.com"}, "capabilities": []string{"post"}}})
			require.True(t, strings.HasPrefix(msg, "forbidden: "), msg)
			require.Contains(t, msg, "example.com")
			msg = callErr(t, cs, "task_create", obj{"idempotency_key": "k3", "contract": contract("delete")})
			require.True(t, strings.HasPrefix(msg, "usage: "), msg)
			msg = callErr(t, cs, "task_create", obj{"idempotency_key": "", "contract": contract("post")})
			require.True(t, strings.HasPrefix(msg, "usage: "), msg)
			msg = callErr(t, cs, "task_create", obj{"idempotency_key": "k4",
				"contract": obj{"domains": []string{"127.0.0.1"}, "capabilities": []string{"post"}, "confirm": []string{"like"}}})
			require.True(t, strings.HasPrefix(msg, "usage: "), msg)

			// State.
			st, _ := call[tasks.State](t, cs, "task_state", obj{"task_id": task.ID})
			require.Equal(t, task.ID, st.ID)
			require.Equal(t, 0, st.Intents)
			msg = callErr(t, cs, "task_state", obj{"task_id": "task_nope"})
			require.True(t, strings.HasPrefix(msg, "not_found: "), msg)

			// Submit within the contract; the same intent twice is one.
			post := obj{"site": "demo", "actor": "@alice", "type": "post", "text": "hello from an agent"}
			st, _ = call[tasks.State](t, cs, "task_submit", obj{"task_id": task.ID, "intent": post})
			require.Equal(t, 1, st.Intents)
			st, _ = call[tasks.State](t, cs, "task_submit", obj{"task_id": task.ID, "intent": post})
			require.Equal(t, 1, st.Intents)
			reply := obj{"site": "demo", "actor": "alice", "type": "reply", "text": "a reply",
				"target": "http://127.0.0.1:8787/p/1"}
			st, _ = call[tasks.State](t, cs, "task_submit", obj{"task_id": task.ID, "intent": reply})
			require.Equal(t, 2, st.Intents)

			// Submit violations: a capability the contract does not allow, a
			// target outside the domains, an unknown site, a malformed intent.
			like := obj{"site": "demo", "actor": "alice", "type": "like", "target": "http://127.0.0.1:8787/p/1"}
			msg = callErr(t, cs, "task_submit", obj{"task_id": task.ID, "intent": like})
			require.True(t, strings.HasPrefix(msg, "forbidden: "), msg)
			require.Contains(t, msg, `"like"`)
			away := obj{"site": "demo", "actor": "alice", "type": "reply", "text": "x", "target": "https://example.com/p/1"}
			msg = callErr(t, cs, "task_submit", obj{"task_id": task.ID, "intent": away})
			require.True(t, strings.HasPrefix(msg, "forbidden: "), msg)
			require.Contains(t, msg, "outside the task's domains")
			msg = callErr(t, cs, "task_submit", obj{"task_id": task.ID,
				"intent": obj{"site": "elsewhere", "actor": "alice", "type": "post", "text": "x"}})
			require.True(t, strings.HasPrefix(msg, "usage: "), msg)
			msg = callErr(t, cs, "task_submit", obj{"task_id": task.ID,
				"intent": obj{"site": "demo", "actor": "alice", "type": "delete"}})
			require.True(t, strings.HasPrefix(msg, "usage: "), msg)
			msg = callErr(t, cs, "task_submit", obj{"task_id": "task_nope", "intent": post})
			require.True(t, strings.HasPrefix(msg, "not_found: "), msg)
			st, _ = call[tasks.State](t, cs, "task_state", obj{"task_id": task.ID})
			require.Equal(t, 2, st.Intents, "a refused intent is not queued")

			// Observe: no tab yet, two intents pending.
			o, _ := call[tasks.Observation](t, cs, "task_observe", obj{"task_id": task.ID})
			require.Equal(t, task.ID, o.TaskID)
			require.Equal(t, "none", o.Tab)
			require.Equal(t, 2, o.PendingIntent)
			msg = callErr(t, cs, "task_observe", obj{"task_id": "task_nope"})
			require.True(t, strings.HasPrefix(msg, "not_found: "), msg)

			// A side-effect bound holds across submissions (a thread counts
			// one per part).
			bounded, _ := call[tasks.State](t, cs, "task_create", obj{"idempotency_key": "k5",
				"contract": obj{"domains": []string{"127.0.0.1"}, "capabilities": []string{"post", "thread"}, "max_side_effects": 2}})
			call[tasks.State](t, cs, "task_submit", obj{"task_id": bounded.ID, "intent": post})
			msg = callErr(t, cs, "task_submit", obj{"task_id": bounded.ID,
				"intent": obj{"site": "demo", "actor": "alice", "type": "thread", "parts": []string{"one", "two"}}})
			require.True(t, strings.HasPrefix(msg, "forbidden: "), msg)

			// List: newest first, bounded.
			list, _ = call[mcptools.TaskList](t, cs, "task_list", obj{})
			require.Len(t, list.Tasks, 2)
			require.Equal(t, bounded.ID, list.Tasks[0].ID)
			list, _ = call[mcptools.TaskList](t, cs, "task_list", obj{"limit": 1})
			require.Len(t, list.Tasks, 1)
			msg = callErr(t, cs, "task_list", obj{"limit": -1})
			require.True(t, strings.HasPrefix(msg, "usage: "), msg)

			// Cancel: twice is safe; a cancelled task takes no intent.
			st, _ = call[tasks.State](t, cs, "task_cancel", obj{"task_id": task.ID, "reason": "changed my mind"})
			require.Equal(t, ledger.TaskCancelled, st.Status)
			require.True(t, slices.ContainsFunc(st.History, func(h tasks.HistoryEntry) bool {
				return strings.Contains(h.Detail, "changed my mind")
			}), "the reason is in the history: %+v", st.History)
			st, _ = call[tasks.State](t, cs, "task_cancel", obj{"task_id": task.ID})
			require.Equal(t, ledger.TaskCancelled, st.Status)
			msg = callErr(t, cs, "task_submit", obj{"task_id": task.ID,
				"intent": obj{"site": "demo", "actor": "alice", "type": "post", "text": "too late"}})
			require.True(t, strings.HasPrefix(msg, "forbidden: "), msg)
			msg = callErr(t, cs, "task_cancel", obj{"task_id": "task_nope"})
			require.True(t, strings.HasPrefix(msg, "not_found: "), msg)

			// What is not a tool is not callable.
			for _, name := range []string{"task_confirm", "task_resolve", "task_grant", "action_resolve"} {
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: obj{"task_id": task.ID}})
				require.Error(t, err, name)
			}
		})
	}
}

// TestMCPNoRawTabIDs records, for a task, a tab whose raw target id, URL
// query and binding hash are recognizable, and asserts that none of them
// appears in any answer of any tool, nor in the tool list.
func TestMCPNoRawTabIDs(t *testing.T) {
	const (
		rawTarget = "RAWTARGET0DEADBEEF0123456789ABCD"
		secret    = "SECRETTOKENVALUE42"
		binding   = "BINDINGHASH77"
	)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t)
			cs := tr.connect(t, f.server, nil)
			var seen []string
			record := func(v any) {
				raw, err := json.Marshal(v)
				require.NoError(t, err)
				seen = append(seen, string(raw))
			}
			tools, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			record(tools)

			task, res := call[tasks.State](t, cs, "task_create", obj{"idempotency_key": "tabs", "contract": contract("post")})
			record(res)
			lease, err := f.db.AcquireLease(ctx, "operator", "test", time.Minute)
			require.NoError(t, err)
			tab, err := f.db.RecordTab(ctx, lease.Fence(), ledger.Tab{TaskID: task.ID, RunID: "run_test", TargetID: rawTarget,
				URL: "http://127.0.0.1:8787/compose?session=" + secret, BindingHash: binding})
			require.NoError(t, err)
			tabs, err := f.db.ListTabs(ctx, task.ID)
			require.NoError(t, err)
			require.Len(t, tabs, 1)
			require.Equal(t, rawTarget, tabs[0].TargetID, "the ledger holds the raw id")

			post := obj{"site": "demo", "actor": "alice", "type": "post", "text": "tabs stay local"}
			for _, c := range []struct {
				name string
				args any
			}{
				{"task_create", obj{"idempotency_key": "tabs", "contract": contract("post")}},
				{"task_state", obj{"task_id": task.ID}},
				{"task_list", obj{}},
				{"task_submit", obj{"task_id": task.ID, "intent": post}},
				{"task_observe", obj{"task_id": task.ID}},
				{"task_submit", obj{"task_id": task.ID, "intent": obj{"site": "demo", "actor": "alice", "type": "like", "target": "http://127.0.0.1:8787/p/1"}}},
				{"task_cancel", obj{"task_id": task.ID, "reason": "done"}},
				{"task_observe", obj{"task_id": task.ID}},
			} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
				require.NoError(t, err)
				record(res)
			}

			// The tab was seen (its state and origin), not its raw values.
			o, _ := call[tasks.Observation](t, cs, "task_observe", obj{"task_id": task.ID})
			require.Equal(t, string(ledger.TabLive), o.Tab)
			require.Equal(t, "http://127.0.0.1:8787", o.Origin)
			require.Equal(t, tab.Epoch, o.Epoch)

			all := strings.Join(seen, "\n")
			for _, v := range []string{rawTarget, secret, binding, "compose?session"} {
				require.NotContains(t, all, v)
			}
		})
	}
}

// TestMCPLegacyClientHTTP: a client on a protocol version from before
// sessionless HTTP (as desktop clients and the Inspector speak) works
// against the stateless handler too.
func TestMCPLegacyClientHTTP(t *testing.T) {
	for _, v := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			cs := connectHTTP(t, newFixture(t).server, &mcp.ClientSessionOptions{ProtocolVersion: v})
			require.Equal(t, v, cs.InitializeResult().ProtocolVersion)
			task, _ := call[tasks.State](t, cs, "task_create", obj{"idempotency_key": "legacy", "contract": contract("post")})
			st, _ := call[tasks.State](t, cs, "task_state", obj{"task_id": task.ID})
			require.Equal(t, task.ID, st.ID)
		})
	}
}

// TestMCPHTTPHandlerRejectsForeignRequests: a DNS-rebound Host and a
// cross-site browser request are refused before any tool runs.
func TestMCPHTTPHandlerRejectsForeignRequests(t *testing.T) {
	f := newFixture(t)
	hs := httptest.NewServer(mcptools.HTTPHandler(f.server))
	t.Cleanup(hs.Close)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_create","arguments":` +
		`{"idempotency_key":"evil","contract":{"domains":["127.0.0.1"],"capabilities":["post"]}}}}`
	post := func(mut func(*http.Request)) int {
		req, err := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		mut(req)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusForbidden, post(func(r *http.Request) { r.Host = "evil.example:80" }))
	require.Equal(t, http.StatusForbidden, post(func(r *http.Request) {
		r.Header.Set("Origin", "https://evil.example")
		r.Header.Set("Sec-Fetch-Site", "cross-site")
	}))
	list, err := f.tasks.List(context.Background(), 0)
	require.NoError(t, err)
	require.Empty(t, list, "a refused request creates nothing")
	// The same request from a plain (non-browser) client goes through.
	require.Equal(t, http.StatusOK, post(func(*http.Request) {}))
	list, err = f.tasks.List(context.Background(), 0)
	require.NoError(t, err)
	require.Len(t, list, 1)
}
