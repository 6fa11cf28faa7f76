package api

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// Idempotent creation: no key 400, new 201 (with Location), same key and
// same request 200 with the original task, same key and another request
// 422; the source is "api".
func TestCreateIdempotency(t *testing.T) {
	e := newEnv(t).start()
	body := createBody("launch")
	r := e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: body})
	want(t, r, http.StatusBadRequest, "idempotency_key_required")
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: body, header: map[string]string{"Idempotency-Key": " "}})
	want(t, r, http.StatusBadRequest, "idempotency_key_required")
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: body, header: map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}})
	want(t, r, http.StatusBadRequest, "bad_idempotency_key")
	if n := e.taskCount(); n != 0 {
		t.Fatalf("%d tasks created without a key", n)
	}

	hdr := map[string]string{"Idempotency-Key": "launch-1"}
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: body, header: hdr})
	want(t, r, http.StatusCreated, "")
	var first tasks.State
	r.into(t, &first)
	if r.header.Get("Location") != "/v1/tasks/"+first.ID {
		t.Fatalf("Location %q", r.header.Get("Location"))
	}
	if first.Source != "api" || first.Status != "open" || first.Title != "launch" || len(first.History) == 0 {
		t.Fatalf("task %+v", first)
	}

	// A retry, with the fields in another order and spacing: the original.
	raw := `{ "contract": {"confirm": ["reply"], "capabilities": ["post", "reply", "thread"], "domains": ["127.0.0.1"]}, "title": "launch" }`
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: raw, header: hdr})
	want(t, r, http.StatusOK, "")
	var again tasks.State
	r.into(t, &again)
	if again.ID != first.ID {
		t.Fatalf("retry made task %s, want %s", again.ID, first.ID)
	}
	// The person's same key is the person's own task: keys of the two
	// tokens never meet.
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.user, body: body, header: hdr})
	want(t, r, http.StatusCreated, "")
	var mine tasks.State
	r.into(t, &mine)
	if mine.ID == first.ID || mine.Source != "person" {
		t.Fatalf("the person's key reached the agent's task: %+v", mine)
	}

	other := createBody("something else")
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: other, header: hdr})
	want(t, r, http.StatusUnprocessableEntity, "idempotency_conflict")
	if n := e.taskCount(); n != 2 {
		t.Fatalf("%d tasks, want the agent's and the person's", n)
	}
	// A new key is a new task.
	e.create("launch-2", other)
}

// While the first request with a key is still in progress (here: blocked
// on the ledger's write lock, held by another connection), a second one
// with that key is 409 in_progress; once the first finishes it is 201 and a
// later retry 200.
func TestCreateInProgress(t *testing.T) {
	e := newEnv(t)
	held := make(chan struct{})
	var once sync.Once
	e.s.afterHold = func() { once.Do(func() { close(held) }) }
	e.start()

	raw, err := sql.Open("sqlite3", "file:"+e.dbPath+"?_busy_timeout=1000")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	conn, err := raw.Conn(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(e.ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	locked := true
	defer func() {
		if locked {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()

	hdr := map[string]string{"Idempotency-Key": "slow"}
	firstDone := make(chan resp, 1)
	go func() {
		r := e.newRequest(req{method: "POST", path: "/v1/tasks", token: e.agent, body: createBody("slow"), header: hdr})
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			firstDone <- resp{status: -1, body: []byte(err.Error())}
			return
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		firstDone <- resp{status: res.StatusCode, body: body}
	}()
	<-held
	r := e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: createBody("slow"), header: hdr})
	want(t, r, http.StatusConflict, "in_progress")
	// Even with another body: the key is busy.
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: createBody("other"), header: hdr})
	want(t, r, http.StatusConflict, "in_progress")

	if _, err := conn.ExecContext(e.ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	locked = false
	first := <-firstDone
	if first.status != http.StatusCreated {
		t.Fatalf("first request: %d %s", first.status, first.body)
	}
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: createBody("slow"), header: hdr})
	want(t, r, http.StatusOK, "")
	if n := e.taskCount(); n != 1 {
		t.Fatalf("%d tasks, want 1", n)
	}
}

// GET /v1/tasks/{id} returns the durable state; GET /v1/tasks lists newest
// first with ?limit.
func TestGetAndList(t *testing.T) {
	e := newEnv(t).start()
	a := e.create("a", createBody("a"))
	b := e.create("b", createBody("b"))

	r := e.do(req{method: "GET", path: "/v1/tasks/" + a.ID, token: e.agent})
	want(t, r, http.StatusOK, "")
	var st tasks.State
	r.into(t, &st)
	if st.ID != a.ID || st.Contract.Domains[0] != "127.0.0.1" || st.Interaction != "idle" || st.Grants == nil || st.Actions == nil {
		t.Fatalf("state %+v", st)
	}
	want(t, e.do(req{method: "GET", path: "/v1/tasks/task_nope", token: e.agent}), http.StatusNotFound, "not_found")

	r = e.do(req{method: "GET", path: "/v1/tasks", token: e.agent})
	want(t, r, http.StatusOK, "")
	var list TaskList
	r.into(t, &list)
	if len(list.Tasks) != 2 {
		t.Fatalf("list %d tasks", len(list.Tasks))
	}
	r = e.do(req{method: "GET", path: "/v1/tasks?limit=1", token: e.user})
	want(t, r, http.StatusOK, "")
	list = TaskList{}
	r.into(t, &list)
	if len(list.Tasks) != 1 || list.Tasks[0].ID != b.ID {
		t.Fatalf("limit=1: %+v, want the newest %s", list.Tasks, b.ID)
	}
	for _, q := range []string{"limit=0", "limit=abc", "limit=1001", "limit=1&limit=2", "page=2", "limit=%zz"} {
		want(t, e.do(req{method: "GET", path: "/v1/tasks?" + q, token: e.agent}), http.StatusBadRequest, "bad_query")
	}
	want(t, e.do(req{method: "GET", path: "/v1/tasks/" + a.ID + "?verbose=1", token: e.agent}), http.StatusBadRequest, "bad_query")
}

// Submitting intents: 202 with the state; the same intent twice is one; a
// contract violation is 403 with the reason; malformed intents are 400.
func TestSubmitAndContract(t *testing.T) {
	e := newEnv(t).start()
	c := demoContract()
	c.MaxSideEffects = 3
	st := e.create("t", tasks.CreateRequest{Title: "bounded", Contract: c})
	path := "/v1/tasks/" + st.ID + "/actions"
	post := intent.Request{Site: "demo", Actor: "@alice", Type: intent.Post, Text: "hello"}
	r := e.do(req{method: "POST", path: path, token: e.agent, body: post})
	want(t, r, http.StatusAccepted, "")
	var got tasks.State
	r.into(t, &got)
	if got.Intents != 1 {
		t.Fatalf("intents %d", got.Intents)
	}
	want(t, e.do(req{method: "POST", path: path, token: e.agent, body: post}), http.StatusAccepted, "")
	if s, _ := e.svc.Get(e.ctx, st.ID); s.Intents != 1 {
		t.Fatalf("the same intent twice made %d", s.Intents)
	}

	forbidden := func(in intent.Request, reason string) {
		t.Helper()
		r := e.do(req{method: "POST", path: path, token: e.agent, body: in})
		want(t, r, http.StatusForbidden, "forbidden")
		if !strings.Contains(r.message(), reason) {
			t.Fatalf("message %q, want the reason %q", r.message(), reason)
		}
	}
	// Capability not in the contract.
	forbidden(intent.Request{Site: "demo", Actor: "alice", Type: intent.Like, Target: "http://127.0.0.1:8787/p/1"}, `does not allow "like"`)
	// Target outside the contract's domains (and not granted).
	forbidden(intent.Request{Site: "demo", Actor: "alice", Type: intent.Reply, Target: "http://evil.example/p/1", Text: "hi"}, "outside the task's domains")
	forbidden(intent.Request{Site: "demo", Actor: "alice", Type: intent.Reply, Target: "http://localhost:8787/p/1", Text: "hi"}, "outside the task's domains")
	// Side-effect bound: 1 submitted, a 3-part thread would make 4 > 3.
	forbidden(intent.Request{Site: "demo", Actor: "alice", Type: intent.Thread, Parts: []string{"1", "2", "3"}}, "bounds the task to 3")
	// Within the bound: 1 + 2 = 3.
	want(t, e.do(req{method: "POST", path: path, token: e.agent,
		body: intent.Request{Site: "demo", Actor: "alice", Type: intent.Thread, Parts: []string{"1", "2"}}}), http.StatusAccepted, "")
	forbidden(intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "one more"}, "bounds the task to 3")

	// Malformed intents.
	for _, in := range []intent.Request{
		{Actor: "alice", Type: intent.Post, Text: "x"},
		{Site: "demo", Actor: "alice", Type: intent.ParseType("teleport")},
		{Site: "nosuchsite", Actor: "alice", Type: intent.Post, Text: "x"},
	} {
		want(t, e.do(req{method: "POST", path: path, token: e.agent, body: in}), http.StatusBadRequest, "usage")
	}
	want(t, e.do(req{method: "POST", path: "/v1/tasks/task_nope/actions", token: e.agent, body: post}), http.StatusNotFound, "not_found")

	// A contract domain outside the ceiling: 403 at creation.
	bad := demoContract()
	bad.Domains = []string{"evil.example"}
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: tasks.CreateRequest{Contract: bad},
		header: map[string]string{"Idempotency-Key": "evil"}})
	want(t, r, http.StatusForbidden, "forbidden")
	// An invalid contract: 400 naming the field.
	r = e.do(req{method: "POST", path: "/v1/tasks", token: e.agent, body: tasks.CreateRequest{Contract: ledger.Contract{Domains: []string{"127.0.0.1"}}},
		header: map[string]string{"Idempotency-Key": "nocaps"}})
	want(t, r, http.StatusBadRequest, "usage")
	if !strings.Contains(r.message(), "contract.capabilities") {
		t.Fatalf("message %q", r.message())
	}
}

// Grants: the person (user token) grants a domain within the ceiling, and
// then the target is allowed; outside the ceiling is 403; the contract
// never changes.
func TestGrant(t *testing.T) {
	e := newEnv(t).start()
	st := e.create("g", createBody("g"))
	reply := intent.Request{Site: "demo", Actor: "alice", Type: intent.Reply, Target: "http://localhost:8787/p/1", Text: "hi"}
	want(t, e.do(req{method: "POST", path: "/v1/tasks/" + st.ID + "/actions", token: e.agent, body: reply}), http.StatusForbidden, "forbidden")

	gpath := "/v1/tasks/" + st.ID + "/grants"
	r := e.do(req{method: "POST", path: gpath, token: e.user, body: GrantRequest{Domain: "evil.example"}})
	want(t, r, http.StatusForbidden, "forbidden")
	if !strings.Contains(r.message(), "ceiling") {
		t.Fatalf("message %q", r.message())
	}
	for _, d := range []string{"", "http://localhost", "localhost/x"} {
		want(t, e.do(req{method: "POST", path: gpath, token: e.user, body: GrantRequest{Domain: d}}), http.StatusBadRequest, "usage")
	}
	want(t, e.do(req{method: "POST", path: "/v1/tasks/task_nope/grants", token: e.user, body: GrantRequest{Domain: "localhost"}}),
		http.StatusNotFound, "not_found")

	r = e.do(req{method: "POST", path: gpath, token: e.user, body: GrantRequest{Domain: "localhost"}})
	want(t, r, http.StatusOK, "")
	var got tasks.State
	r.into(t, &got)
	if len(got.Grants) != 1 || got.Grants[0].Domain != "localhost" || got.Grants[0].GrantedBy != "person (api)" {
		t.Fatalf("grants %+v", got.Grants)
	}
	if len(got.Contract.Domains) != 1 || got.Contract.Domains[0] != "127.0.0.1" {
		t.Fatalf("the contract changed: %+v", got.Contract)
	}
	want(t, e.do(req{method: "POST", path: "/v1/tasks/" + st.ID + "/actions", token: e.agent, body: reply}), http.StatusAccepted, "")
}

// Cancel: either token, twice is safe, with or without a body; then
// submitting is refused.
func TestCancel(t *testing.T) {
	e := newEnv(t).start()
	st := e.create("c", createBody("c"))
	path := "/v1/tasks/" + st.ID + "/cancel"
	r := e.do(req{method: "POST", path: path, token: e.agent})
	want(t, r, http.StatusOK, "")
	var got tasks.State
	r.into(t, &got)
	if got.Status != "cancelled" {
		t.Fatalf("status %q", got.Status)
	}
	last := got.History[len(got.History)-1]
	if !strings.Contains(last.Detail, "agent") {
		t.Fatalf("history %+v", last)
	}
	want(t, e.do(req{method: "POST", path: path, token: e.user, body: CancelRequest{Reason: "changed my mind"}}), http.StatusOK, "")
	r = e.do(req{method: "POST", path: "/v1/tasks/" + st.ID + "/actions", token: e.agent,
		body: intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "late"}})
	want(t, r, http.StatusForbidden, "forbidden")

	st2 := e.create("c2", createBody("c2"))
	r = e.do(req{method: "POST", path: "/v1/tasks/" + st2.ID + "/cancel", token: e.user, body: CancelRequest{Reason: "not needed"}})
	want(t, r, http.StatusOK, "")
	got = tasks.State{}
	r.into(t, &got)
	if last := got.History[len(got.History)-1]; !strings.Contains(last.Detail, "person (api): not needed") {
		t.Fatalf("history %+v", last)
	}
	want(t, e.do(req{method: "POST", path: "/v1/tasks/task_nope/cancel", token: e.agent}), http.StatusNotFound, "not_found")
	want(t, e.do(req{method: "POST", path: path, token: e.agent, body: CancelRequest{Reason: strings.Repeat("r", 501)}}),
		http.StatusBadRequest, "usage")
}

// Confirm and decline: the person answers an action waiting for
// confirmation once; a second answer is 409.
func TestConfirm(t *testing.T) {
	e := newEnv(t).start()
	st := e.create("cf", createBody("cf"))
	f := e.fence()
	a1 := e.reserve(f, st.ID, "one")
	a2 := e.reserve(f, st.ID, "two")
	for _, a := range []ledger.Action{a1, a2} {
		if _, err := e.db.RequestConfirmation(e.ctx, f, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := e.svc.Get(e.ctx, st.ID)
	if got.Interaction != "waiting_for_confirmation" {
		t.Fatalf("interaction %q", got.Interaction)
	}
	want(t, e.do(req{method: "POST", path: "/v1/actions/" + a1.ID + "/confirm", token: e.user, body: ConfirmRequest{Decision: "maybe"}}),
		http.StatusBadRequest, "usage")
	r := e.do(req{method: "POST", path: "/v1/actions/" + a1.ID + "/confirm", token: e.user, body: ConfirmRequest{Decision: "confirm"}})
	want(t, r, http.StatusOK, "")
	var as tasks.ActionState
	r.into(t, &as)
	if as.ID != a1.ID || as.Confirmation != "confirmed" || as.Effect != "pending" {
		t.Fatalf("action %+v", as)
	}
	want(t, e.do(req{method: "POST", path: "/v1/actions/" + a1.ID + "/confirm", token: e.user, body: ConfirmRequest{Decision: "decline"}}),
		http.StatusConflict, "illegal_transition")

	r = e.do(req{method: "POST", path: "/v1/actions/" + a2.ID + "/confirm", token: e.user, body: ConfirmRequest{Decision: "decline", Reason: "off-brand"}})
	want(t, r, http.StatusOK, "")
	as = tasks.ActionState{}
	r.into(t, &as)
	if as.Confirmation != "declined" {
		t.Fatalf("action %+v", as)
	}
	c, _ := e.db.GetConfirmation(e.ctx, a2.ID)
	if c.By != "person (api)" || c.Reason != "off-brand" {
		t.Fatalf("confirmation %+v", c)
	}
	want(t, e.do(req{method: "POST", path: "/v1/actions/act_nope/confirm", token: e.user, body: ConfirmRequest{Decision: "confirm"}}),
		http.StatusNotFound, "not_found")
}

// Resolve: the person settles an ambiguous action as verified at a URL or
// absent with a reason; anything else is refused.
func TestResolve(t *testing.T) {
	e := newEnv(t).start()
	st := e.create("rs", createBody("rs"))
	f := e.fence()
	a1 := e.reserve(f, st.ID, "one")
	a2 := e.reserve(f, st.ID, "two")
	e.ambiguous(f, a1.ID)
	e.ambiguous(f, a2.ID)
	path := func(id string) string { return "/v1/actions/" + id + "/resolve" }

	for _, body := range []any{
		ResolveRequest{},
		ResolveRequest{VerifiedURL: "http://127.0.0.1:8787/p/9", Absent: true, Reason: "x"},
		ResolveRequest{Absent: true},
		ResolveRequest{VerifiedURL: "not a url"},
		ResolveRequest{VerifiedURL: "javascript:alert(1)"},
	} {
		want(t, e.do(req{method: "POST", path: path(a1.ID), token: e.user, body: body}), http.StatusBadRequest, "usage")
	}
	if e.action(a1.ID).Status != ledger.Ambiguous {
		t.Fatal("a refused resolution changed the action")
	}
	r := e.do(req{method: "POST", path: path(a1.ID), token: e.user, body: ResolveRequest{VerifiedURL: "http://127.0.0.1:8787/p/9"}})
	want(t, r, http.StatusOK, "")
	var as tasks.ActionState
	r.into(t, &as)
	if as.Status != "verified" || as.Effect != "known_complete" || as.Result != "http://127.0.0.1:8787/p/9" {
		t.Fatalf("action %+v", as)
	}
	r = e.do(req{method: "POST", path: path(a2.ID), token: e.user, body: ResolveRequest{Absent: true, Reason: "not on the profile"}})
	want(t, r, http.StatusOK, "")
	as = tasks.ActionState{}
	r.into(t, &as)
	if as.Status != "failed" || as.Effect != "not_done" {
		t.Fatalf("action %+v", as)
	}
	// Absent and to be tried again: a definitive failure, replanned by a
	// later pass.
	a3 := e.reserve(f, st.ID, "three")
	e.ambiguous(f, a3.ID)
	want(t, e.do(req{method: "POST", path: path(a3.ID), token: e.user, body: ResolveRequest{Retry: true, Reason: "x"}}),
		http.StatusBadRequest, "usage")
	want(t, e.do(req{method: "POST", path: path(a3.ID), token: e.user, body: ResolveRequest{Retry: true, VerifiedURL: "http://127.0.0.1:8787/p/9"}}),
		http.StatusBadRequest, "usage")
	r = e.do(req{method: "POST", path: path(a3.ID), token: e.user, body: ResolveRequest{Absent: true, Retry: true, Reason: "not on the profile"}})
	want(t, r, http.StatusOK, "")
	as = tasks.ActionState{}
	r.into(t, &as)
	if as.Status != "failed" || e.action(a3.ID).FailureClass != ledger.Definitive {
		t.Fatalf("action %+v, class %q", as, e.action(a3.ID).FailureClass)
	}
	if e.action(a2.ID).FailureClass != ledger.Abandoned {
		t.Fatalf("without retry: class %q, want abandoned", e.action(a2.ID).FailureClass)
	}
	// Settled actions do not change again.
	want(t, e.do(req{method: "POST", path: path(a1.ID), token: e.user, body: ResolveRequest{Absent: true, Reason: "x"}}),
		http.StatusConflict, "illegal_transition")
	want(t, e.do(req{method: "POST", path: path("act_nope"), token: e.user, body: ResolveRequest{Absent: true, Reason: "x"}}),
		http.StatusNotFound, "not_found")
}

// The agent token may create, read, submit and cancel; grants, confirm and
// resolve need the user token (403 forbidden, nothing changes). The user
// token may do everything.
func TestPermissions(t *testing.T) {
	e := newEnv(t).start()
	st := e.create("p", createBody("p"))
	f := e.fence()
	pending := e.reserve(f, st.ID, "pending")
	if _, err := e.db.RequestConfirmation(e.ctx, f, pending.ID); err != nil {
		t.Fatal(err)
	}
	amb := e.reserve(f, st.ID, "ambiguous")
	e.ambiguous(f, amb.ID)

	userOnly := []req{
		{method: "POST", path: "/v1/tasks/" + st.ID + "/grants", body: GrantRequest{Domain: "localhost"}},
		{method: "POST", path: "/v1/actions/" + pending.ID + "/confirm", body: ConfirmRequest{Decision: "confirm"}},
		{method: "POST", path: "/v1/actions/" + amb.ID + "/resolve", body: ResolveRequest{VerifiedURL: "http://127.0.0.1:8787/p/1"}},
		{method: "PUT", path: "/v1/config/cleanup", body: CleanupRequest{Preference: "never"}},
		{method: "GET", path: "/v1/config/cleanup"},
	}
	for _, q := range userOnly {
		q.token = e.agent
		r := e.do(q)
		want(t, r, http.StatusForbidden, "forbidden")
		if !strings.Contains(r.message(), "user's token") {
			t.Fatalf("message %q", r.message())
		}
	}
	got, _ := e.svc.Get(e.ctx, st.ID)
	if len(got.Grants) != 0 {
		t.Fatal("the agent granted a domain")
	}
	if c, _ := e.db.GetConfirmation(e.ctx, pending.ID); c.State != ledger.ConfirmPending {
		t.Fatal("the agent confirmed an action")
	}
	if e.action(amb.ID).Status != ledger.Ambiguous {
		t.Fatal("the agent resolved an action")
	}
	if set, _ := e.db.CleanupSettingOf(e.ctx, testProfile); set.Known() {
		t.Fatalf("the agent set the cleanup preference: %+v", set)
	}
	// The route table says the same.
	for _, rt := range routeTable(true) {
		isUser := strings.HasSuffix(rt.path, "/grants") || strings.HasSuffix(rt.path, "/confirm") || strings.HasSuffix(rt.path, "/resolve") ||
			rt.path == "/v1/config/cleanup"
		if isUser != (rt.role == RoleUser) {
			t.Fatalf("%s %s: role %s", rt.method, rt.path, rt.role)
		}
	}
	for _, q := range userOnly {
		q.token = e.user
		want(t, e.do(q), http.StatusOK, "")
	}
	// The user does agent things too.
	st2 := e.create("p2", createBody("p2"))
	for _, q := range []req{
		{method: "GET", path: "/v1/tasks/" + st2.ID},
		{method: "GET", path: "/v1/tasks"},
		{method: "GET", path: "/v1/status"},
		{method: "GET", path: "/v1/openapi.json"},
	} {
		q.token = e.user
		want(t, e.do(q), http.StatusOK, "")
	}
	want(t, e.do(req{method: "POST", path: "/v1/tasks/" + st2.ID + "/actions", token: e.user,
		body: intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "x"}}), http.StatusAccepted, "")
	want(t, e.do(req{method: "POST", path: "/v1/tasks", token: e.user, body: createBody("u"),
		header: map[string]string{"Idempotency-Key": "u"}}), http.StatusCreated, "")
}

// JSON bodies are parsed strictly: unknown fields (named), trailing data,
// wrong types (with the field's path), non-objects, and other media types
// are refused, and nothing is created.
func TestStrictJSON(t *testing.T) {
	e := newEnv(t).start()
	valid := `{"title": "x", "contract": {"domains": ["127.0.0.1"], "capabilities": ["post"]}}`
	cases := []struct {
		name, body, ctype string
		status            int
		code, msg         string
	}{
		{"UnknownField", `{"title": "x", "colour": "red", "contract": {"domains": ["127.0.0.1"], "capabilities": ["post"]}}`, "", 400, "bad_json", `"colour"`},
		{"UnknownNested", `{"contract": {"domains": ["127.0.0.1"], "capabilities": ["post"], "grants": ["evil.example"]}}`, "", 400, "bad_json", `"grants"`},
		{"Trailing", valid + `{}`, "", 400, "bad_json", "after the JSON object"},
		{"TrailingGarbage", valid + ` x`, "", 400, "bad_json", "after the JSON object"},
		{"WrongType", `{"contract": {"domains": ["127.0.0.1"], "capabilities": ["post"], "max_side_effects": "many"}}`, "", 400, "bad_json", "contract.max_side_effects"},
		{"Syntax", `{"title": }`, "", 400, "bad_json", "invalid JSON"},
		{"Truncated", `{"title": "x"`, "", 400, "bad_json", ""},
		{"Array", `[` + valid + `]`, "", 400, "bad_json", "object"},
		{"Null", `null`, "", 400, "bad_json", "object"},
		{"Empty", ``, "", 400, "bad_json", "JSON object"},
		{"FormEncoded", `title=x`, "application/x-www-form-urlencoded", 415, "unsupported_media_type", "application/json"},
		{"TextPlain", valid, "text/plain", 415, "unsupported_media_type", ""},
		{"NoContentType", valid, "-", 415, "unsupported_media_type", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{"Idempotency-Key": "strict-" + c.name}
			q := e.newRequest(req{method: "POST", path: "/v1/tasks", token: e.agent, body: c.body, header: hdr})
			switch c.ctype {
			case "":
			case "-":
				q.Header.Del("Content-Type")
			default:
				q.Header.Set("Content-Type", c.ctype)
			}
			r := e.send(q)
			want(t, r, c.status, c.code)
			if !strings.Contains(r.message(), c.msg) {
				t.Fatalf("message %q, want %q", r.message(), c.msg)
			}
		})
	}
	if n := e.taskCount(); n != 0 {
		t.Fatalf("%d tasks created from bad JSON", n)
	}
	r := e.send(e.newRequest(req{method: "POST", path: "/v1/tasks", token: e.agent, body: valid,
		header: map[string]string{"Idempotency-Key": "ok", "Content-Type": "application/json; charset=utf-8"}}))
	want(t, r, http.StatusCreated, "")
}

// Unknown paths and methods answer JSON 404 and 405 (with Allow).
func TestNotFoundAndMethodNotAllowed(t *testing.T) {
	e := newEnv(t).start()
	want(t, e.do(req{method: "GET", path: "/v2/tasks", token: e.agent}), http.StatusNotFound, "not_found")
	want(t, e.do(req{method: "GET", path: "/", token: e.agent}), http.StatusNotFound, "not_found")
	want(t, e.do(req{method: "GET", path: "/mcp", token: e.agent}), http.StatusNotFound, "not_found")
	r := e.do(req{method: "DELETE", path: "/v1/tasks", token: e.agent})
	want(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
	if !strings.Contains(r.header.Get("Allow"), "POST") {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
	want(t, e.do(req{method: "GET", path: "/v1/actions/x/confirm", token: e.user}), http.StatusMethodNotAllowed, "method_not_allowed")
}

// GET /v1/status: {"ok":true} without a status function; the function's
// answer or its error (by errcode.Of; internal errors not shown).
func TestStatus(t *testing.T) {
	e := newEnv(t).start()
	r := e.do(req{method: "GET", path: "/v1/status", token: e.agent})
	want(t, r, http.StatusOK, "")
	if strings.TrimSpace(string(r.body)) != `{"ok":true}` {
		t.Fatalf("status %s", r.body)
	}

	var fail error
	e2 := newEnv(t, func(o *Options) {
		o.Status = func(ctx context.Context) (any, error) {
			if fail != nil {
				return nil, fail
			}
			return e.db.Status(ctx, "operator", budgets.Policy{})
		}
	}).start()
	r = e2.do(req{method: "GET", path: "/v1/status", token: e2.agent})
	want(t, r, http.StatusOK, "")
	var rep map[string]any
	r.into(t, &rep)
	if _, ok := rep["Counts"]; !ok {
		t.Fatalf("status %s", r.body)
	}
	fail = fmt.Errorf("status: %w", ledger.ErrLocked)
	want(t, e2.do(req{method: "GET", path: "/v1/status", token: e2.agent}), http.StatusConflict, "locked")
	fail = errors.New("disk on fire at /secret/path")
	r = e2.do(req{method: "GET", path: "/v1/status", token: e2.agent})
	want(t, r, http.StatusInternalServerError, "internal")
	if strings.Contains(string(r.body), "/secret/path") {
		t.Fatalf("internal error shown: %s", r.body)
	}
	if !strings.Contains(e2.logs.String(), "disk on fire") {
		t.Fatal("internal error not logged")
	}
}

// The MCP handler is mounted at /mcp behind the same checks, for either
// token, and sees the caller's role.
func TestMCPMount(t *testing.T) {
	var seen []Role
	var mu sync.Mutex
	e := newEnv(t, func(o *Options) {
		o.MCP = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			role, _ := RoleFromContext(r.Context())
			mu.Lock()
			seen = append(seen, role)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"role": string(role)})
		})
	}).start()
	want(t, e.do(req{method: "POST", path: "/mcp", token: e.agent, body: map[string]any{"jsonrpc": "2.0"}}), http.StatusOK, "")
	want(t, e.do(req{method: "POST", path: "/mcp", token: e.user, body: map[string]any{"jsonrpc": "2.0"}}), http.StatusOK, "")
	want(t, e.do(req{method: "GET", path: "/mcp", token: e.user}), http.StatusMethodNotAllowed, "method_not_allowed")
	want(t, e.do(req{method: "DELETE", path: "/mcp", token: e.agent}), http.StatusMethodNotAllowed, "method_not_allowed")
	want(t, e.do(req{method: "POST", path: "/mcp", body: map[string]any{}}), http.StatusUnauthorized, "unauthorized")
	want(t, e.do(req{method: "POST", path: "/mcp", token: e.agent, body: map[string]any{},
		header: map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}}), http.StatusForbidden, "cross_site")
	want(t, e.do(req{method: "POST", path: "/mcp", token: e.agent, host: "evil.example"}), http.StatusMisdirectedRequest, "bad_host")
	want(t, e.do(req{method: "POST", path: "/mcp?token=" + e.agent, token: e.agent}), http.StatusBadRequest, "token_in_query")
	if fmt.Sprint(seen) != "[agent user]" {
		t.Fatalf("MCP saw %v", seen)
	}
}

// Every request is logged with method, route pattern, status and duration;
// never the URL, a body or a header.
func TestRequestLog(t *testing.T) {
	e := newEnv(t).start()
	st := e.create("log", createBody("a very distinctive title"))
	e.do(req{method: "GET", path: "/v1/tasks/" + st.ID, token: e.agent})
	e.do(req{method: "GET", path: "/v1/tasks/" + st.ID, token: "wrong"})
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["msg"] == "api request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 3 {
		t.Fatalf("%d request lines", len(lines))
	}
	if lines[1]["route"] != "GET /v1/tasks/{id}" || lines[1]["status"] != float64(200) || lines[1]["role"] != "agent" ||
		lines[1]["method"] != "GET" || lines[1]["duration"] == nil {
		t.Fatalf("log %v", lines[1])
	}
	if lines[2]["status"] != float64(401) || lines[2]["code"] != "unauthorized" {
		t.Fatalf("log %v", lines[2])
	}
	logs := e.logs.String()
	for _, s := range []string{"a very distinctive title", st.ID, e.agent, e.user} {
		if strings.Contains(logs, s) {
			t.Fatalf("log holds %q", s)
		}
	}
}
