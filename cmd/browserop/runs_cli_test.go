package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// `browserop runs` lists the passes newest first, within --limit; `runs
// show RUN` prints a run's counts and each skip with its site, type,
// entry and reason, escaped; --json answers the same as GET /v1/runs.
func TestRunsCommand(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	l, err := db.AcquireLease(ctx, "browser-operator", "seed", time.Minute)
	require.NoError(t, err)
	first, err := db.StartRun(ctx, l)
	require.NoError(t, err)
	require.NoError(t, db.FinishRun(ctx, l.Fence(), first.ID, "ok", map[string]any{"outcome": "ok",
		"counts": map[string]int{"verified": 1, "budget_skips": 1},
		"actions": []map[string]any{
			{"action_id": "act_v", "entry": "e1", "type": "post", "site": "demo", "status": "verified", "note": "verified"},
			{"entry": "e2" + hostile, "type": "post", "site": "demo", "status": "budget_skip", "reason": "budget exhausted: post_text allows 1 per 24h0m0s, 1 used and 0 in flight"},
		}}))
	second, err := db.StartRun(ctx, l)
	require.NoError(t, err)
	require.NoError(t, db.ReleaseLease(ctx, l))
	require.NoError(t, db.Close())

	code, out, errs := c.run("runs")
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	require.True(t, strings.HasPrefix(lines[1], second.ID), "newest first:\n%s", out)
	require.Contains(t, lines[1], "running")
	require.True(t, strings.HasPrefix(lines[2], first.ID), out)

	code, out, errs = c.run("runs", "--limit", "1")
	require.Equal(t, 0, code, errs)
	require.NotContains(t, out, first.ID)

	code, out, errs = c.run("runs", "show", first.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "counts: budget_skips 1, verified 1")
	require.Regexp(t, `budget_skip\s+demo\s+post\s+e2evil`, out)
	require.Contains(t, out, "post_text allows 1 per 24h0m0s")
	if r, ok := rawControl(out); ok {
		t.Fatalf("runs show prints a raw %U:\n%q", r, out)
	}

	code, out, errs = c.run("runs", "show", first.ID, "--json")
	require.Equal(t, 0, code, errs)
	var got tasks.RunState
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, []tasks.RunSkip{{Kind: tasks.SkipBudget, Site: "demo", Type: "post", Entry: "e2" + hostile,
		Reason: "budget exhausted: post_text allows 1 per 24h0m0s, 1 used and 0 in flight"}}, got.Skips)

	for _, args := range [][]string{{"runs", "--limit", "0"}, {"runs", "show"}, {"runs", "nope"}} {
		code, _, errs = c.run(args...)
		require.Equal(t, 2, code, "%v: %s", args, errs)
	}
	code, _, errs = c.run("runs", "show", "run_nope")
	require.NotEqual(t, 0, code)
	require.Contains(t, errs, "run_nope")
}
