package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// GET /v1/tasks/{id} shows, on a pending action, the last hard stop that
// held it (its cause, what the page showed, with the user token only),
// and nothing once the action went ahead.
func TestTaskStateShowsLastStop(t *testing.T) {
	e := newEnv(t).start()
	st := e.create("stop", createBody("held"))
	f := e.fence()
	a := e.reserve(f, st.ID, "held by a stop")
	if _, err := e.db.RecordStop(e.ctx, f, a.ID, ledger.Stop{Kind: "identity_mismatch", Cause: "signed in as @bob, not @alice", RunID: "run_api"}); err != nil {
		t.Fatal(err)
	}
	r := e.do(req{method: "GET", path: "/v1/tasks/" + st.ID, token: e.agent})
	want(t, r, http.StatusOK, "")
	var got tasks.State
	r.into(t, &got)
	if len(got.Actions) != 1 || got.Actions[0].LastStop == nil {
		t.Fatalf("no last stop on the action: %s", r.body)
	}
	s := got.Actions[0].LastStop
	if s.Kind != "identity_mismatch" || s.Cause != "" || s.RunID != "run_api" || s.At.IsZero() ||
		s.Reason != "hard stop: identity_mismatch" || strings.Contains(string(r.body), "@bob") {
		t.Fatalf("the agent's last stop %+v", s)
	}
	r = e.do(req{method: "GET", path: "/v1/tasks/" + st.ID, token: e.user})
	want(t, r, http.StatusOK, "")
	r.into(t, &got)
	if s := got.Actions[0].LastStop; s == nil || s.Cause != "signed in as @bob, not @alice" ||
		s.Reason != "hard stop: identity_mismatch (signed in as @bob, not @alice)" {
		t.Fatalf("the person's last stop %+v", s)
	}
	if _, err := e.db.Transition(e.ctx, f, a.ID, ledger.Change{To: ledger.Executing, Reason: "performing once"}); err != nil {
		t.Fatal(err)
	}
	r = e.do(req{method: "GET", path: "/v1/tasks/" + st.ID, token: e.agent})
	want(t, r, http.StatusOK, "")
	if strings.Contains(string(r.body), "last_stop") {
		t.Fatalf("a stop is left on an action that went ahead: %s", r.body)
	}
}
