package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/browserop/browserop/tasks"
)

// GET /v1/tasks/{id} shows the task's owner generation as written (the
// operator that last acted on it), not computed; a submission with an
// Interaction-Generation header older than the task's is 409
// stale_generation and submits nothing; a malformed header is 400.
func TestInteractionGenerationHeader(t *testing.T) {
	e := newEnv(t).start()
	st := e.create("gens", createBody("fenced"))
	f := e.fence()
	e.reserve(f, st.ID, "owned by the pass")

	r := e.do(req{method: "GET", path: "/v1/tasks/" + st.ID, token: e.agent})
	want(t, r, http.StatusOK, "")
	var got tasks.State
	r.into(t, &got)
	if got.OwnerGeneration != f.Generation || got.InteractionGeneration != 0 {
		t.Fatalf("owner %d (want %d), interaction %d", got.OwnerGeneration, f.Generation, got.InteractionGeneration)
	}
	submit := func(at, text string) resp {
		h := map[string]string{}
		if at != "" {
			h["Interaction-Generation"] = at
		}
		return e.do(req{method: "POST", path: "/v1/tasks/" + st.ID + "/actions", token: e.agent, header: h,
			body: map[string]string{"site": "demo", "actor": "@alice", "type": "post", "text": text}})
	}
	r = submit("", "a first turn")
	want(t, r, http.StatusAccepted, "")
	r.into(t, &got)
	if got.InteractionGeneration != 1 {
		t.Fatalf("interaction %d after a submission", got.InteractionGeneration)
	}
	want(t, submit("1", "a second turn"), http.StatusAccepted, "")
	r = submit("1", "from a turn taken before")
	want(t, r, http.StatusConflict, "stale_generation")
	if !strings.Contains(r.message(), "is at interaction generation 2, not 1") {
		t.Fatalf("message %q", r.message())
	}
	for _, bad := range []string{"0", "x", "-3"} {
		want(t, submit(bad, "bad header"), http.StatusBadRequest, "usage")
	}
	r = e.do(req{method: "GET", path: "/v1/tasks/" + st.ID, token: e.agent})
	r.into(t, &got)
	if got.Intents != 2 || got.InteractionGeneration != 2 {
		t.Fatalf("intents %d, interaction %d: a refused submission changes nothing", got.Intents, got.InteractionGeneration)
	}
}
