package tasks_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// TestRuns: runs read back newest first, a run still going as running,
// an interrupted one with its transitions as counts, a summary that does
// not decode as unreadable, and limits outside 1..MaxRuns refused.
func TestRuns(t *testing.T) {
	ctx := context.Background()
	db, err := ledger.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	svc := tasks.New(db, nil, nil)

	l1, err := db.AcquireLease(ctx, "browser-operator", "one", time.Minute)
	require.NoError(t, err)
	r1, err := db.StartRun(ctx, l1)
	require.NoError(t, err)
	require.NoError(t, db.FinishRun(ctx, l1.Fence(), r1.ID, "ok", map[string]any{
		"outcome": "ok", "counts": map[string]int{"verified": 1, "budget_skips": 1},
		"needs_person": []string{"act_x"},
		"actions": []map[string]any{
			{"action_id": "act_v", "entry": "e1", "type": "post", "site": "demo", "status": "verified", "result": "http://h/p/1", "note": "verified"},
			{"entry": "e2", "type": "reply", "site": "demo", "status": "budget_skip", "reason": "budget exhausted: reply allows 1 per 24h0m0s"},
		}}))
	require.NoError(t, db.ReleaseLease(ctx, l1))
	l2, err := db.AcquireLease(ctx, "browser-operator", "two", time.Minute)
	require.NoError(t, err)
	r2, err := db.StartRun(ctx, l2)
	require.NoError(t, err)

	t.Run("OK", func(t *testing.T) {
		rs, err := svc.Runs(ctx, 0)
		require.NoError(t, err)
		require.Len(t, rs, 2)
		require.Equal(t, r2.ID, rs[0].ID, "newest first")
		require.Equal(t, tasks.RunRunning, rs[0].Outcome)
		require.Nil(t, rs[0].EndedAt)
		require.Empty(t, rs[0].Skips)
		got := rs[1]
		require.Equal(t, "ok", got.Outcome)
		require.NotNil(t, got.EndedAt)
		require.Equal(t, 1, got.NeedsPerson)
		require.Equal(t, map[string]int{"verified": 1, "budget_skips": 1}, got.Counts)
		require.Equal(t, []tasks.RunSkip{{Kind: tasks.SkipBudget, Site: "demo", Type: "reply",
			Reason: "budget exhausted: reply allows 1 per 24h0m0s", Entry: "e2"}}, got.Skips, "the verified action is no skip")
		one, err := svc.Run(ctx, r1.ID)
		require.NoError(t, err)
		require.Equal(t, got, one)
	})
	t.Run("Interrupted", func(t *testing.T) {
		require.NoError(t, db.ReleaseLease(ctx, l2))
		l3, err := db.AcquireLease(ctx, "browser-operator", "three", time.Minute)
		require.NoError(t, err)
		_, err = db.EndInterruptedRuns(ctx, l3.Fence(), "run_next")
		require.NoError(t, err)
		got, err := svc.Run(ctx, r2.ID)
		require.NoError(t, err)
		require.Equal(t, ledger.OutcomeInterrupted, got.Outcome)
		require.NotNil(t, got.EndedAt)
		require.Equal(t, map[string]int{}, got.Counts, "no transition under its generation")
	})
	t.Run("Unreadable", func(t *testing.T) {
		raw, err := sql.Open("sqlite3", "file:"+db.Path())
		require.NoError(t, err)
		defer raw.Close()
		_, err = raw.Exec(`UPDATE runs SET summary_json = '{"counts":' WHERE id = ?`, r1.ID)
		require.NoError(t, err)
		got, err := svc.Run(ctx, r1.ID)
		require.NoError(t, err)
		require.True(t, got.Unreadable)
		require.Equal(t, "ok", got.Outcome, "the record still shown")
		require.Empty(t, got.Skips)
	})
	t.Run("ErrLimit", func(t *testing.T) {
		for _, n := range []int{-1, tasks.MaxRuns + 1} {
			_, err := svc.Runs(ctx, n)
			require.ErrorIs(t, err, errcode.ErrUsage)
			require.ErrorContains(t, err, "limit must be from 1 to 1000")
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := svc.Run(ctx, "run_nope")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}
