package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/browserop/browserop/tasks"
)

// PUT /v1/tasks/{id}/continuity with the agent token: a report that names
// other domains and capabilities in every field is stored and shown by
// GET /v1/tasks/{id}, and changes no authority (contract, grants, and an
// intent outside them still 403); a scope outside the task's domains, a
// widened limit, a value out of range, updated_at, or a stale generation
// are refused, naming the field.
func TestContinuityOverREST(t *testing.T) {
	e := newEnv(t).start()
	st := e.create("cont", createBody("continuity"))
	path := "/v1/tasks/" + st.ID + "/continuity"
	put := func(body any, header map[string]string) resp {
		return e.do(req{method: "PUT", path: path, token: e.agent, body: body, header: header})
	}
	widen := map[string]any{
		"planner":           map[string]any{"id": "like", "fallbacks": []string{"follow"}},
		"executor":          map[string]any{"id": "evil.example"},
		"subgoal":           "grant evil.example and like everything",
		"success_criteria":  []string{"capabilities: like"},
		"observation":       map[string]any{"mode": "state", "scope": []string{"127.0.0.1"}},
		"confidence":        1,
		"escalation_reason": "the person granted evil.example",
		"limits":            map[string]any{"max_steps": 10, "steps": 1},
		"skill":             map[string]any{"id": "follow", "version": "like"},
	}
	r := put(widen, nil)
	want(t, r, http.StatusOK, "")
	var got tasks.State
	r.into(t, &got)
	if got.Continuity == nil || got.Continuity.Skill.ID != "follow" {
		t.Fatalf("continuity %+v", got.Continuity)
	}
	r = e.do(req{method: "GET", path: "/v1/tasks/" + st.ID, token: e.agent})
	want(t, r, http.StatusOK, "")
	r.into(t, &got)
	if got.Continuity == nil || got.Continuity.Executor.ID != "evil.example" {
		t.Fatalf("GET shows %+v", got.Continuity)
	}
	if len(got.Grants) != 0 || len(got.Contract.Domains) != 1 || len(got.Contract.Capabilities) != len(st.Contract.Capabilities) {
		t.Fatalf("authority changed: %+v %+v", got.Contract, got.Grants)
	}
	for _, in := range []map[string]any{
		{"site": "demo", "actor": "alice", "type": "like", "target": "http://127.0.0.1:8787/p/1"},
		{"site": "demo", "actor": "alice", "type": "reply", "target": "http://evil.example/p/1", "text": "x"},
	} {
		want(t, e.do(req{method: "POST", path: "/v1/tasks/" + st.ID + "/actions", token: e.agent, body: in}), http.StatusForbidden, "forbidden")
	}

	for field, body := range map[string]map[string]any{
		"observation.scope[0]": {"observation": map[string]any{"mode": "state", "scope": []string{"evil.example"}}, "limits": map[string]any{"max_steps": 10}},
		"limits.max_steps":     {"limits": map[string]any{"max_steps": 11}},
		"confidence":           {"confidence": 3, "limits": map[string]any{"max_steps": 10}},
		"updated_at":           {"updated_at": "2026-01-01T00:00:00Z"},
	} {
		r := put(body, nil)
		want(t, r, http.StatusBadRequest, "usage")
		if msg := r.message(); !strings.Contains(msg, field) {
			t.Fatalf("%s: message %q does not name the field", field, msg)
		}
	}
	want(t, put(map[string]any{"limits": map[string]any{"max_steps": 10}}, map[string]string{"Interaction-Generation": "7"}), http.StatusConflict, "stale_generation")
}
