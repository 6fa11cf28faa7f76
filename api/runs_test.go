package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/browserop/browserop/tasks"
)

// GET /v1/runs lists the passes newest first, each with its skips (site,
// kind, type, reason); GET /v1/runs/{id} answers one. The person is told
// the calendar entry and the action of a skip, an agent neither; a limit
// out of range and an unknown run are refused.
func TestRuns(t *testing.T) {
	e := newEnv(t).start()
	f := e.fence()
	l, err := e.db.GetLease(e.ctx, f.Lease)
	if err != nil {
		t.Fatal(err)
	}
	first, err := e.db.StartRun(e.ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.FinishRun(e.ctx, f, first.ID, "ok", map[string]any{"outcome": "ok", "counts": map[string]int{"quality_skips": 1},
		"actions": []map[string]any{{"entry": "", "type": "post", "site": "demo", "status": "quality_skip", "reason": "score 0.10 is below the threshold 0.50"},
			{"action_id": "act_m", "entry": "late-entry", "type": "reply", "site": "demo", "status": "failed", "note": "missed",
				"reason": "missed: due more than 1h0m0s ago; not published late"}}}); err != nil {
		t.Fatal(err)
	}
	second, err := e.db.StartRun(e.ctx, l)
	if err != nil {
		t.Fatal(err)
	}

	for _, token := range []string{e.user, e.agent} {
		r := e.do(req{method: "GET", path: "/v1/runs", token: token})
		want(t, r, http.StatusOK, "")
		var list RunList
		r.into(t, &list)
		if len(list.Runs) != 2 || list.Runs[0].ID != second.ID || list.Runs[0].Outcome != tasks.RunRunning || list.Runs[1].ID != first.ID {
			t.Fatalf("runs %s", r.body)
		}
		r = e.do(req{method: "GET", path: "/v1/runs/" + first.ID, token: token})
		want(t, r, http.StatusOK, "")
		var run tasks.RunState
		r.into(t, &run)
		if len(run.Skips) != 2 || run.Counts["quality_skips"] != 1 {
			t.Fatalf("run %s", r.body)
		}
		q, m := run.Skips[0], run.Skips[1]
		if q.Kind != tasks.SkipQuality || q.Site != "demo" || q.Type != "post" || !strings.Contains(q.Reason, "below the threshold") ||
			m.Kind != tasks.SkipMissed || m.Site != "demo" || m.Type != "reply" || !strings.HasPrefix(m.Reason, "missed: ") {
			t.Fatalf("skips %+v", run.Skips)
		}
		person := token == e.user
		if (m.Entry == "late-entry" && m.ActionID == "act_m") != person || !person && strings.Contains(string(r.body), "late-entry") {
			t.Fatalf("person %v: entry %q, action %q", person, m.Entry, m.ActionID)
		}
	}
	r := e.do(req{method: "GET", path: "/v1/runs?limit=1", token: e.agent})
	want(t, r, http.StatusOK, "")
	var list RunList
	r.into(t, &list)
	if len(list.Runs) != 1 || list.Runs[0].ID != second.ID {
		t.Fatalf("limit 1: %s", r.body)
	}
	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "limit=1&limit=2", "since=1"} {
		want(t, e.do(req{method: "GET", path: "/v1/runs?" + q, token: e.agent}), http.StatusBadRequest, "bad_query")
	}
	want(t, e.do(req{method: "GET", path: "/v1/runs/run_nope", token: e.agent}), http.StatusNotFound, "not_found")
	want(t, e.do(req{method: "GET", path: "/v1/runs"}), http.StatusUnauthorized, "")
}
