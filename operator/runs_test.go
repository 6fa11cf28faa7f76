package operator_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/tasks"
)

// TestRunsReadBackSkips: a pass's budget skip, quality skip and missed
// entry, said in its summary, are read back from the ledger (what
// `browserop runs show` and GET /v1/runs/{id} answer) with their site,
// type and reason, and none of the entries' texts.
func TestRunsReadBackSkips(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, demosite.Faults{})
	var err error
	w.policy, err = budgetsPolicy(1)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "planner.sh")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\ncat >/dev/null\n"+`echo '{"candidates":[
		{"site":"demo","actor":"alice","type":"post","text":"a weak idea of the model","score":0.1,"evidence":"meh"}]}'`+"\n"), 0o700))
	w.planner = operator.Planner{Command: []string{"/bin/sh", p}, Timeout: 10 * time.Second}
	w.calendar("entries:\n" + post("a", "the first of the day") + post("b", "one too many") +
		"  - {id: late, site: demo, actor: alice, type: post, at: \"" + time.Now().Add(-2*time.Hour).UTC().Format(time.RFC3339) + "\", text: stale news}\n")
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum.Actions)

	svc := tasks.New(w.db, nil, nil)
	run, err := svc.Run(ctx, sum.RunID)
	require.NoError(t, err)
	require.Equal(t, sum.Outcome, run.Outcome)
	require.Equal(t, sum.Counts["budget_skips"], run.Counts["budget_skips"])
	byKind := map[string]tasks.RunSkip{}
	for _, s := range run.Skips {
		byKind[s.Kind] = s
		require.Equal(t, "demo", s.Site, "%+v", s)
		require.Equal(t, "post", s.Type, "%+v", s)
		require.NotEmpty(t, s.Reason, "%+v", s)
		for _, text := range []string{"one too many", "stale news", "a weak idea of the model"} {
			require.NotContains(t, s.Reason, text, "value-free")
		}
	}
	require.Len(t, run.Skips, 3, "%+v", run.Skips)
	require.Contains(t, byKind[tasks.SkipBudget].Reason, "budget exhausted")
	require.Equal(t, "b", byKind[tasks.SkipBudget].Entry)
	require.Contains(t, byKind[tasks.SkipQuality].Reason, "below the threshold")
	require.Contains(t, byKind[tasks.SkipMissed].Reason, "missed")
	require.Equal(t, "late", byKind[tasks.SkipMissed].Entry)
	require.NotEmpty(t, byKind[tasks.SkipMissed].ActionID)

	listed, err := svc.Runs(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, []tasks.RunState{run}, listed, "the newest run, as shown")
	agent, err := svc.Agent().Run(ctx, sum.RunID)
	require.NoError(t, err)
	for _, s := range agent.Skips {
		require.Empty(t, s.Entry+s.ActionID, "an agent is not told the person's entries: %+v", s)
		require.Equal(t, "demo", s.Site)
	}
}

// TestSkipKindsAreTheSummaryStatuses: the task service reads skips by the
// words the pass writes.
func TestSkipKindsAreTheSummaryStatuses(t *testing.T) {
	require.Equal(t, string(operator.StatusBudgetSkip), tasks.SkipBudget)
	require.Equal(t, string(operator.StatusQualitySkip), tasks.SkipQuality)
	require.Equal(t, string(operator.NoteMissed), tasks.SkipMissed)
}

// TestPassWritesTaskGenerations: a pass writes, on each task it acts on,
// its lease generation (owner) and its browser connection's generation;
// an operator that connects again (here: a new runner, as after a
// restart) acts through the next connection.
func TestPassWritesTaskGenerations(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, demosite.Faults{})
	w.calendar("entries:\n" + post("first", "through the first connection"))
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum.Actions)
	tasksOf := func() map[string]ledger.Task {
		ts, err := w.db.ListTasks(ctx, 0)
		require.NoError(t, err)
		out := map[string]ledger.Task{}
		for _, task := range ts {
			out[task.IdempotencyKey] = task
		}
		return out
	}
	first := tasksOf()["calendar:first"]
	require.Equal(t, sum.Generation, first.OwnerGeneration)
	require.Equal(t, int64(1), first.ConnectionGeneration, "the connection the pass made")

	w.useRunner(nil, w.site)
	w.calendar("entries:\n" + post("first", "through the first connection") + post("second", "through the second"))
	sum2 := w.pass()
	require.Equal(t, 1, sum2.Counts["verified"], "%+v", sum2.Actions)
	ts := tasksOf()
	require.Equal(t, sum2.Generation, ts["calendar:second"].OwnerGeneration)
	require.Equal(t, int64(2), ts["calendar:second"].ConnectionGeneration, "connected again")
	require.Equal(t, first.OwnerGeneration, ts["calendar:first"].OwnerGeneration, "a settled task is not acted on")
}
