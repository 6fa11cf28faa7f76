package ledger_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

func TestEndInterruptedRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	l1, err := db.AcquireLease(ctx, "op", "killed", time.Minute)
	require.NoError(t, err)
	r1, err := db.StartRun(ctx, l1)
	require.NoError(t, err)
	a := mustReserve(t, db, l1.Fence(), postIntent("in flight when killed"))
	_, err = db.Transition(ctx, l1.Fence(), a.ID, ledger.Change{To: ledger.Executing, Reason: "performing once"})
	require.NoError(t, err)
	// Killed here: no FinishRun, no release.
	c.Advance(5 * time.Minute)
	l2, err := db.AcquireLease(ctx, "op", "next", time.Minute)
	require.NoError(t, err)
	r2, err := db.StartRun(ctx, l2)
	require.NoError(t, err)

	ended, err := db.EndInterruptedRuns(ctx, l2.Fence(), r2.ID)
	require.NoError(t, err)
	require.Len(t, ended, 1)
	require.Equal(t, r1.ID, ended[0].ID)
	got, err := db.GetRun(ctx, r1.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.OutcomeInterrupted, got.Outcome)
	require.Equal(t, c.Now(), got.EndedAt)
	var s ledger.InterruptedSummary
	require.NoError(t, json.Unmarshal(got.Summary, &s))
	require.Equal(t, map[string]int{"planned": 1, "executing": 1}, s.Transitions, "its last known state")
	require.Equal(t, a.ID, s.LastAction)
	require.Equal(t, "executing", s.LastStatus)
	require.Equal(t, r2.ID, s.FoundBy)

	// The current run is never touched, and a second call finds nothing.
	again, err := db.EndInterruptedRuns(ctx, l2.Fence(), r2.ID)
	require.NoError(t, err)
	require.Empty(t, again)
	cur, err := db.GetRun(ctx, r2.ID)
	require.NoError(t, err)
	require.True(t, cur.EndedAt.IsZero())
	// Only the current generation may end them.
	_, err = db.EndInterruptedRuns(ctx, l1.Fence(), "x")
	require.ErrorIs(t, err, ledger.ErrStaleGeneration)
}

func TestListRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	var ids []string
	for i := range 4 {
		l := mustLease(t, db, "op")
		r, err := db.StartRun(ctx, l)
		require.NoError(t, err)
		ids = append(ids, r.ID)
		if i < 3 {
			require.NoError(t, db.FinishRun(ctx, l.Fence(), r.ID, "ok", map[string]int{"run": i}))
			require.NoError(t, db.ReleaseLease(ctx, l))
		}
		c.Advance(time.Minute)
	}

	t.Run("OK", func(t *testing.T) {
		got, err := db.ListRuns(ctx, 10)
		require.NoError(t, err)
		require.Len(t, got, 4)
		for i, r := range got {
			require.Equal(t, ids[3-i], r.ID, "newest first")
		}
		require.True(t, got[0].EndedAt.IsZero(), "the run still going has no end")
		require.Empty(t, got[0].Outcome)
		require.Nil(t, got[0].Summary)
		require.Equal(t, "ok", got[1].Outcome)
		require.JSONEq(t, `{"run":2}`, string(got[1].Summary))
		one, err := db.GetRun(ctx, ids[1])
		require.NoError(t, err)
		require.Equal(t, one, got[2], "listed as GetRun reads it")
	})
	t.Run("Limit", func(t *testing.T) {
		got, err := db.ListRuns(ctx, 2)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, []string{ids[3], ids[2]}, []string{got[0].ID, got[1].ID})
	})
	t.Run("ErrLimit", func(t *testing.T) {
		_, err := db.ListRuns(ctx, 0)
		require.ErrorContains(t, err, "limit must be at least 1, got 0")
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := db.GetRun(ctx, "run_nope")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}

// TestMigrationElevenIndexesRuns: migration 0011 adds only the index by
// start time, which the newest-first listing reads instead of sorting.
func TestMigrationElevenIndexesRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	populatedAt(t, path, 10)
	before := snapshot(t, path)

	db := MustOpenAt(t, path, newClock())
	v, err := db.SchemaVersion(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, v, 11)
	runs, err := db.ListRuns(ctx, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"run_2", "run_1"}, []string{runs[0].ID, runs[1].ID}, "the runs kept, newest first")
	require.NoError(t, db.Close())

	after := withoutEleven(t, snapshot(t, path))
	for name, o := range before.Objects {
		require.Equal(t, o, after.Objects[name], "%s %s is as it was", o.Type, name)
	}
	for name, sh := range before.Shapes {
		require.Equal(t, sh, after.Shapes[name], "table %s keeps its columns, references and indexes", name)
	}
	require.Equal(t, before.Rows, after.Rows, "every row, with its rowid")
	require.Equal(t, len(before.Objects), len(after.Objects), "no object but the index")

	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer raw.Close()
	var name string
	require.NoError(t, raw.QueryRow(`SELECT name FROM schema_migrations WHERE version = 11`).Scan(&name))
	require.Equal(t, "runs_started", name)
	var plan []string
	for _, r := range queryAll(t, raw, `EXPLAIN QUERY PLAN SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 20`) {
		plan = append(plan, r[3].(string))
	}
	require.Contains(t, strings.Join(plan, "; "), "runs_started", "the listing reads the index")
	require.NotContains(t, strings.Join(plan, "; "), "TEMP B-TREE", "the listing sorts nothing")
}

// withoutEleven is a snapshot of a ledger at schema version 11 or later
// with what migration 0011 adds taken out again: the runs' index by start
// time and its schema_migrations row (and those of later migrations).
func withoutEleven(tb testing.TB, s ledgerSnapshot) ledgerSnapshot {
	tb.Helper()
	ix, ok := s.Objects["runs_started"]
	require.True(tb, ok, "migration 0011's index")
	require.Equal(tb, schemaObject{Type: "index", Table: "runs", SQL: sql.NullString{Valid: true,
		String: "CREATE INDEX runs_started ON runs (started_at, id)"}}, ix)
	delete(s.Objects, "runs_started")
	shape := s.Shapes["runs"]
	delete(shape.Indexes, "runs_started")
	s.Shapes["runs"] = shape
	var migs [][]any
	for _, r := range s.Rows["schema_migrations"] {
		if r[1].(int64) < 11 {
			migs = append(migs, r)
		}
	}
	s.Rows["schema_migrations"] = migs
	return s
}
