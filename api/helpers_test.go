package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/internal/child"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/mcptools"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

// env is one API over a real ledger file and a real tasks.Service with the
// bundled demo adapter (origin http://127.0.0.1:8787).
type env struct {
	t      *testing.T
	ctx    context.Context
	db     *ledger.DB
	dbPath string
	svc    *tasks.Service
	s      *server
	srv    *httptest.Server
	user   string
	agent  string
	logs   *child.Buffer

	mu      sync.Mutex
	outputs []string // every response: status line, headers and body
}

// ceiling of the test service: the demo's host and one more to grant.
var testCeiling = []string{"127.0.0.1", "localhost"}

func newEnv(t *testing.T, configure ...func(*Options)) *env {
	t.Helper()
	return newEnvCeiling(t, testCeiling, configure...)
}

// testPolicy is the budget policy of the test service: generous limits on
// every format, so that the budget counts without refusing.
func testPolicy() budgets.Policy {
	p, err := budgets.NewPolicy(nil, map[string]budgets.GroupLimit{"all": {Formats: budgets.Formats, Max: 1000, Window: 24 * time.Hour}})
	if err != nil {
		panic(err)
	}
	return p
}

// withRealMCP mounts the real MCP server at /mcp.
func withRealMCP(o *Options) {
	o.MCP = mcptools.HTTPHandler(mcptools.NewServer(o.Tasks.Agent(), "test"))
}

// testProfile is the browser profile the test daemon keeps the cleanup
// preference of.
const testProfile = "/profiles/test"

// newEnvCeiling is newEnv with another authority.ceiling.
func newEnvCeiling(t *testing.T, ceiling []string, configure ...func(*Options)) *env {
	t.Helper()
	return newEnvWith(t, ceiling, nil, configure...)
}

// newEnvMedia is newEnv with a task service that reads intents' media
// files from mediaDir.
func newEnvMedia(t *testing.T, mediaDir string, configure ...func(*Options)) *env {
	t.Helper()
	return newEnvWith(t, testCeiling, []tasks.Option{tasks.WithMediaDir(mediaDir)}, configure...)
}

// newEnvWith is newEnv with another ceiling and more task service options.
func newEnvWith(t *testing.T, ceiling []string, taskOpts []tasks.Option, configure ...func(*Options)) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "state", "ledger.db")
	db, err := ledger.Open(ctx, dbPath, ledger.Options{BusyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("open ledger: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	decl, err := sites.LoadFS(bundled.Sites, "sites")
	if err != nil {
		t.Fatalf("load sites: %v", err)
	}
	var adapters []sites.Adapter
	for _, d := range decl {
		adapters = append(adapters, d)
	}
	svc := tasks.New(db, adapters, ceiling, append([]tasks.Option{tasks.WithBudget(testPolicy())}, taskOpts...)...)
	user, agent, err := LoadOrCreateTokens(filepath.Join(dir, "state", "token"))
	if err != nil {
		t.Fatalf("tokens: %v", err)
	}
	logs := &child.Buffer{}
	o := Options{Tasks: svc, UserToken: user, AgentToken: agent, MaxBody: 64 << 10,
		Log:     slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Cleanup: db, CleanupProfile: testProfile}
	for _, c := range configure {
		c(&o)
	}
	e := &env{t: t, ctx: ctx, db: db, dbPath: dbPath, svc: svc, s: newServer(o), user: user, agent: agent, logs: logs}
	return e
}

// start serves the API; call after setting test hooks on e.s.
func (e *env) start() *env {
	e.srv = httptest.NewServer(e.s)
	e.t.Cleanup(e.srv.Close)
	return e
}

// req is one request. body is a string (sent as is) or a value (JSON).
type req struct {
	method, path string
	token        string
	body         any
	header       map[string]string
	host         string
}

// resp is an answer.
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) code() string {
	var eb ErrorBody
	_ = json.Unmarshal(r.body, &eb)
	return eb.Error.Code
}

func (r resp) message() string {
	var eb ErrorBody
	_ = json.Unmarshal(r.body, &eb)
	return eb.Error.Message
}

func (r resp) into(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func (e *env) newRequest(q req) *http.Request {
	e.t.Helper()
	var body io.Reader
	switch b := q.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	case io.Reader:
		body = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	r, err := http.NewRequest(q.method, e.srv.URL+q.path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if q.body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if q.token != "" {
		r.Header.Set("Authorization", "Bearer "+q.token)
	}
	for k, v := range q.header {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	if q.host != "" {
		r.Host = q.host
	}
	return r
}

func (e *env) do(q req) resp {
	e.t.Helper()
	return e.send(e.newRequest(q))
}

func (e *env) send(r *http.Request) resp {
	e.t.Helper()
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		e.t.Fatalf("%s %s: %v", r.Method, r.URL.Path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString(res.Status + "\n")
	_ = res.Header.Write(&sb)
	sb.Write(body)
	e.mu.Lock()
	e.outputs = append(e.outputs, sb.String())
	e.mu.Unlock()
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		e.t.Errorf("%s %s: Content-Type %q, want application/json", r.Method, r.URL.Path, ct)
	}
	for k := range res.Header {
		if strings.HasPrefix(strings.ToLower(k), "access-control-") {
			e.t.Errorf("%s %s: CORS header %s sent", r.Method, r.URL.Path, k)
		}
	}
	return resp{status: res.StatusCode, header: res.Header, body: body}
}

// want checks the status and, for errors, the code.
func want(t *testing.T, r resp, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if code != "" && r.code() != code {
		t.Fatalf("code %q, want %q; body %s", r.code(), code, r.body)
	}
	if status >= 400 {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &raw); err != nil || len(raw) != 1 || raw["error"] == nil {
			t.Fatalf("error body %s is not {\"error\": {...}}", r.body)
		}
		if r.message() == "" {
			t.Fatalf("error without a message: %s", r.body)
		}
	}
}

// demoContract allows posts and replies on the demo site; replies need
// confirmation.
func demoContract() ledger.Contract {
	return ledger.Contract{Domains: []string{"127.0.0.1"}, Capabilities: []string{"post", "reply", "thread"}, Confirm: []string{"reply"}}
}

func createBody(title string) tasks.CreateRequest {
	return tasks.CreateRequest{Title: title, Contract: demoContract()}
}

// create makes a task over the API with the agent token.
func (e *env) create(key string, body any) tasks.State {
	e.t.Helper()
	r := e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: body, header: map[string]string{"Idempotency-Key": key}})
	want(e.t, r, http.StatusCreated, "")
	var st tasks.State
	r.into(e.t, &st)
	return st
}

func (e *env) taskCount() int {
	e.t.Helper()
	ts, err := e.svc.List(e.ctx, 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(ts)
}

// fence takes the operator lease, as a pass would.
func (e *env) fence() ledger.Fence {
	e.t.Helper()
	l, err := e.db.AcquireLease(e.ctx, "operator", "api-test", time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Fence()
}

// reserve records a planned action of the task, as a pass would.
func (e *env) reserve(f ledger.Fence, taskID, text string) ledger.Action {
	e.t.Helper()
	payload, _ := json.Marshal(map[string]string{"text": text})
	a, _, err := e.db.Reserve(e.ctx, f, ledger.Intent{TaskID: taskID, Type: "post", Site: "demo", Actor: "alice",
		TargetURL: "http://127.0.0.1:8787/compose", Payload: payload})
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// ambiguous makes a reserved action ambiguous (a mutation timed out).
func (e *env) ambiguous(f ledger.Fence, id string) {
	e.t.Helper()
	if _, err := e.db.Transition(e.ctx, f, id, ledger.Change{To: ledger.Executing, Reason: "perform"}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.Transition(e.ctx, f, id, ledger.Change{To: ledger.Ambiguous, Reason: "submit timed out"}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) action(id string) ledger.Action {
	e.t.Helper()
	a, err := e.db.GetAction(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}
