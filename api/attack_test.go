package api

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// These are the attacks a hostile agent (and a careless client) tried
// against the API; docs/api.md lists them with these tests.

// submitParallel sends n distinct post intents to a task at once and
// returns how many were accepted.
func (e *env) submitParallel(taskID string, n int) int {
	e.t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do(req{method: "POST", path: "/v1/tasks/" + taskID + "/actions", token: e.agent,
				body: intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: fmt.Sprintf("race %d", i)}})
			switch r.status {
			case http.StatusAccepted:
				mu.Lock()
				accepted++
				mu.Unlock()
			case http.StatusForbidden:
				if !strings.Contains(r.message(), "side effects") {
					e.t.Errorf("refused for another reason: %s", r.body)
				}
			default:
				e.t.Errorf("status %d: %s", r.status, r.body)
			}
		}()
	}
	wg.Wait()
	return accepted
}

// Twenty parallel submits against a bound of 1 and of 3 accept exactly 1
// and 3: the bound is checked in the transaction that accepts the intent.
func TestSubmitBoundHoldsUnderParallelSubmits(t *testing.T) {
	for _, bound := range []int{1, 3} {
		t.Run(fmt.Sprint(bound), func(t *testing.T) {
			e := newEnv(t).start()
			body := createBody("bounded")
			body.Contract.MaxSideEffects = bound
			st := e.create("bound", body)
			if got := e.submitParallel(st.ID, 20); got != bound {
				t.Fatalf("accepted %d of 20 parallel submits, want %d", got, bound)
			}
			intents, err := e.db.TaskIntents(e.ctx, st.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(intents) != bound {
				t.Fatalf("the ledger holds %d intents, want %d", len(intents), bound)
			}
		})
	}
}

// An agent's Idempotency-Key never reaches the calendar's or the planner's
// keys: a task created as "calendar:squatme" leaves calendar entry squatme
// free to be published.
func TestAgentKeyCannotSquatCalendar(t *testing.T) {
	e := newEnv(t).start()
	for _, key := range []string{"calendar:squatme", "planner:0123456789abcdef01234567"} {
		e.create(key, createBody("squat"))
	}
	cal := ledger.TaskRequest{Title: "squatme", Source: "calendar",
		Contract: ledger.Contract{Domains: []string{"127.0.0.1"}, Capabilities: []string{"post"}}}
	task, created, err := e.db.CreateTask(e.ctx, "calendar:squatme", cal)
	if err != nil {
		t.Fatalf("the calendar's own task: %v", err)
	}
	if !created || task.Request.Source != "calendar" {
		t.Fatalf("the calendar got an agent's task (created %v, source %q)", created, task.Request.Source)
	}
	plan := cal
	plan.Source = "planner"
	if _, created, err := e.db.CreateTask(e.ctx, "planner:0123456789abcdef01234567", plan); err != nil || !created {
		t.Fatalf("the planner's own task: created %v, %v", created, err)
	}
}

// A task the person creates with the user token is the person's: the agent
// token can neither see it nor submit to nor cancel it.
func TestPersonsTasksHiddenFromAgent(t *testing.T) {
	e := newEnv(t).start()
	r := e.do(req{method: "POST", path: "/v1/tasks", token: e.user, body: createBody("the person's"),
		header: map[string]string{"Idempotency-Key": "mine"}})
	want(t, r, http.StatusCreated, "")
	var mine tasks.State
	r.into(t, &mine)
	theirs := e.create("theirs", createBody("the agent's"))

	want(t, e.do(req{method: "GET", path: "/v1/tasks/" + mine.ID, token: e.agent}), http.StatusNotFound, "not_found")
	want(t, e.do(req{method: "POST", path: "/v1/tasks/" + mine.ID + "/actions", token: e.agent,
		body: intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "x"}}), http.StatusNotFound, "not_found")
	want(t, e.do(req{method: "POST", path: "/v1/tasks/" + mine.ID + "/cancel", token: e.agent}), http.StatusNotFound, "not_found")
	var list TaskList
	r = e.do(req{method: "GET", path: "/v1/tasks", token: e.agent})
	want(t, r, http.StatusOK, "")
	r.into(t, &list)
	if len(list.Tasks) != 1 || list.Tasks[0].ID != theirs.ID {
		t.Fatalf("the agent lists %d tasks, want only its own", len(list.Tasks))
	}
	// The same key from the agent is another task, not the person's.
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: createBody("the person's"),
		header: map[string]string{"Idempotency-Key": "mine"}})
	want(t, r, http.StatusCreated, "")
	got, err := e.db.GetTask(e.ctx, mine.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != ledger.TaskOpen {
		t.Fatalf("the person's task is %s", got.Status)
	}
	r = e.do(req{method: "GET", path: "/v1/tasks/" + mine.ID, token: e.user})
	want(t, r, http.StatusOK, "")
}

// The ceiling means what it says: a plain host matches itself only, an IP
// literal itself only, and a wildcard only subdomains.
func TestCeilingMatching(t *testing.T) {
	e := newEnv(t).start()
	for _, d := range []string{"evil.127.0.0.1", "a.localhost", "127.0.0.1.evil.example"} {
		body := createBody("wide")
		body.Contract.Domains = []string{d}
		r := e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: body, header: map[string]string{"Idempotency-Key": "wide-" + d}})
		if r.status != http.StatusForbidden && r.status != http.StatusBadRequest {
			t.Fatalf("contract domain %q: status %d, want a refusal: %s", d, r.status, r.body)
		}
	}
	st := e.create("grants", createBody("grants"))
	for _, d := range []string{"evil.localhost", "a.b.localhost", "*.localhost", "evil.127.0.0.1"} {
		r := e.do(req{method: "POST", path: "/v1/tasks/" + st.ID + "/grants", token: e.user, body: GrantRequest{Domain: d}})
		if r.status != http.StatusForbidden && r.status != http.StatusBadRequest {
			t.Fatalf("grant %q: status %d, want a refusal: %s", d, r.status, r.body)
		}
	}

	wide := newEnvCeiling(t, []string{"example.com", "*.media.example"}).start()
	for d, ok := range map[string]bool{"example.com": true, "evil.example.com": false, "a.b.example.com": false,
		"*.example.com": false, "cdn.media.example": true, "a.cdn.media.example": true, "media.example": false} {
		body := createBody("c")
		body.Contract.Domains = []string{d}
		r := wide.do(req{method: "POST", path: "/v1/tasks", token: wide.agent, body: body, header: map[string]string{"Idempotency-Key": "c-" + d}})
		if (r.status == http.StatusCreated) != ok {
			t.Fatalf("ceiling [example.com *.media.example], contract domain %q: status %d, want allowed=%v: %s", d, r.status, ok, r.body)
		}
	}

	// An empty ceiling means no grants at all, as the example config says.
	none := newEnvCeiling(t, nil).start()
	st = none.create("none", createBody("none"))
	for _, d := range []string{"127.0.0.1", "localhost", "example.com"} {
		r := none.do(req{method: "POST", path: "/v1/tasks/" + st.ID + "/grants", token: none.user, body: GrantRequest{Domain: d}})
		want(t, r, http.StatusForbidden, "forbidden")
		if !strings.Contains(r.message(), "authority.ceiling") {
			t.Fatalf("grant %q: message %q does not say how to allow it", d, r.message())
		}
	}
}

// A person's resolve over REST takes the same route as the CLI's: the
// verified URL must be on the action's site, and the budget counts it.
func TestResolveChecksSiteAndBudget(t *testing.T) {
	e := newEnv(t).start()
	st := e.create("r", createBody("r"))
	f := e.fence()
	a, _, err := e.db.Reserve(e.ctx, f, ledger.Intent{TaskID: st.ID, Type: kind.Post, Format: budgets.PostText, Site: "demo", Actor: "alice",
		Payload: ledger.Payload{Intent: "task:x", Text: "uncertain"}.JSON()})
	if err != nil {
		t.Fatal(err)
	}
	e.ambiguous(f, a.ID)
	r := e.do(req{method: "POST", path: "/v1/actions/" + a.ID + "/resolve", token: e.user,
		body: ResolveRequest{VerifiedURL: "https://evil.example/p/1"}})
	want(t, r, http.StatusBadRequest, "usage")
	if !strings.Contains(r.message(), "not on the action's site") {
		t.Fatalf("message %q", r.message())
	}
	if e.action(a.ID).Status != ledger.Ambiguous {
		t.Fatal("a URL on another site settled the action")
	}
	want(t, e.do(req{method: "POST", path: "/v1/actions/" + a.ID + "/resolve", token: e.user,
		body: ResolveRequest{VerifiedURL: "http://127.0.0.1:8787/p/7"}}), http.StatusOK, "")
	usage, err := e.db.BudgetUsage(e.ctx, testPolicy())
	if err != nil {
		t.Fatal(err)
	}
	if usage[0].Used != 1 {
		t.Fatalf("the budget counts %d verified posts after a person's resolve, want 1", usage[0].Used)
	}
}

// JSON field names are case-sensitive and a key given twice is refused.
func TestStrictJSONNamesAndDuplicates(t *testing.T) {
	e := newEnv(t).start()
	for name, body := range map[string]string{
		"CaseFolded": `{"Contract": {"Domains": ["127.0.0.1"], "Capabilities": ["post"]}}`,
		"Duplicate":  `{"title": "a", "title": "b", "contract": {"domains": ["127.0.0.1"], "capabilities": ["post"]}}`,
		"DupNested":  `{"contract": {"domains": ["127.0.0.1"], "capabilities": ["post"], "capabilities": ["post", "like"]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: body, header: map[string]string{"Idempotency-Key": name}})
			want(t, r, http.StatusBadRequest, "bad_json")
		})
	}
	if n := e.taskCount(); n != 0 {
		t.Fatalf("%d tasks created", n)
	}
}

// /mcp answers its refusals in the API's JSON error shape.
func TestMCPErrorsAreJSON(t *testing.T) {
	e := newEnv(t, withRealMCP).start()
	r := e.do(req{method: "GET", path: "/mcp", token: e.agent})
	want(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
	if r.header.Get("Allow") != "POST" {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
	want(t, e.do(req{method: "DELETE", path: "/mcp", token: e.agent}), http.StatusMethodNotAllowed, "method_not_allowed")
	q := e.newRequest(req{method: "POST", path: "/mcp", token: e.agent, body: `{"jsonrpc":"2.0"}`})
	q.Header.Set("Content-Type", "text/plain")
	q.Header.Set("Accept", "application/json, text/event-stream")
	want(t, e.send(q), http.StatusUnsupportedMediaType, "unsupported_media_type")
	q = e.newRequest(req{method: "POST", path: "/mcp", token: e.agent, body: `{not json`})
	q.Header.Set("Accept", "application/json, text/event-stream")
	want(t, e.send(q), http.StatusBadRequest, "") // want checks the {"error": ...} shape
	// An Accept without the event stream is 406, as the docs say (the
	// SDK alone answers 400).
	q = e.newRequest(req{method: "POST", path: "/mcp", token: e.agent, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`})
	q.Header.Set("Accept", "application/json")
	want(t, e.send(q), http.StatusNotAcceptable, "not_acceptable")
}

// A limit of 0 is refused over REST, as over MCP.
func TestListLimitZero(t *testing.T) {
	e := newEnv(t).start()
	want(t, e.do(req{method: "GET", path: "/v1/tasks?limit=0", token: e.agent}), http.StatusBadRequest, "bad_query")
}

// An error message never repeats its code.
func TestNoDoubledErrorPrefix(t *testing.T) {
	e := newEnv(t).start()
	st := e.create("d", createBody("d"))
	want(t, e.do(req{method: "POST", path: "/v1/tasks/" + st.ID + "/cancel", token: e.agent}), http.StatusOK, "")
	r := e.do(req{method: "POST", path: "/v1/tasks/" + st.ID + "/actions", token: e.agent,
		body: intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "late"}})
	want(t, r, http.StatusForbidden, "forbidden")
	if strings.HasPrefix(r.message(), "forbidden") {
		t.Fatalf("message %q repeats its code", r.message())
	}
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: `{"contract": {"domains": [], "capabilities": []}}`,
		header: map[string]string{"Idempotency-Key": "bad"}})
	want(t, r, http.StatusBadRequest, "usage")
	if strings.HasPrefix(r.message(), "usage") {
		t.Fatalf("message %q repeats its code", r.message())
	}
}

// A symlinked token file is refused, as the docs say.
func TestSymlinkedTokenFileRefused(t *testing.T) {
	dir := privateTempDir(t)
	real := filepath.Join(dir, "real")
	if _, _, err := LoadOrCreateTokens(real); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "token")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadOrCreateTokens(link)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("a symlinked token file: %v, want a refusal naming the symbolic link", err)
	}
}

// The token_in_query warning tells the person to rotate only a token that
// is really one of browserop's.
func TestTokenInQueryWarning(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	e := newEnv(t, func(o *Options) {
		o.Log = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	}).start()
	want(t, e.do(req{method: "GET", path: "/v1/tasks?token=not-a-browserop-token", token: e.agent}), http.StatusBadRequest, "token_in_query")
	mu.Lock()
	got := logs.String()
	logs.Reset()
	mu.Unlock()
	if strings.Contains(got, "rotate") {
		t.Fatalf("a value that is no token of browserop's asks for a rotation: %s", got)
	}
	want(t, e.do(req{method: "GET", path: "/v1/tasks?x=" + e.agent, token: e.agent}), http.StatusBadRequest, "token_in_query")
	mu.Lock()
	got = logs.String()
	mu.Unlock()
	if !strings.Contains(got, "agent token") || !strings.Contains(got, "rotate") {
		t.Fatalf("the agent token in a URL: warning %s does not name it and the fix", got)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Invalid UTF-8 in a string is refused with the field and the reason.
func TestInvalidUTF8NamesTheField(t *testing.T) {
	e := newEnv(t).start()
	body := "{\"title\": \"bad \xff byte\", \"contract\": {\"domains\": [\"127.0.0.1\"], \"capabilities\": [\"post\"]}}"
	r := e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: body, header: map[string]string{"Idempotency-Key": "utf8"}})
	want(t, r, http.StatusBadRequest, "bad_json")
	if !strings.Contains(r.message(), `"title"`) || !strings.Contains(r.message(), "UTF-8") {
		t.Fatalf("message %q names neither the field nor the fault", r.message())
	}
	if n := e.taskCount(); n != 0 {
		t.Fatalf("%d tasks created", n)
	}
}
