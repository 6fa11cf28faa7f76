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

// TestMigrationElevenIndexesRuns: migration 0011 adds the runs' index by
// start time, which the newest-first listing reads instead of sorting, and
// the task generations (withoutEleven checks the owners it backfills);
// nothing else changes, and the generations never decrease.
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

	after := withoutEleven(t, withoutTabFacts(t, withoutFieldProvenance(t, withoutContinuity(t, withoutCleanupPreference(t, snapshot(t, path))))))
	for name, o := range before.Objects {
		require.Equal(t, o, after.Objects[name], "%s %s is as it was", o.Type, name)
	}
	for name, sh := range before.Shapes {
		require.Equal(t, sh, after.Shapes[name], "table %s keeps its columns, references and indexes", name)
	}
	require.Equal(t, before.Rows, after.Rows, "every row, with its rowid")
	require.Equal(t, len(before.Objects), len(after.Objects), "no object but the index and the triggers")

	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer raw.Close()
	var name string
	require.NoError(t, raw.QueryRow(`SELECT name FROM schema_migrations WHERE version = 11`).Scan(&name))
	require.Equal(t, "runs_and_generations", name)
	rw, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(t, err)
	defer rw.Close()
	for _, q := range []string{
		`UPDATE tasks SET owner_generation = 1 WHERE id = 'task_open'`,
		`UPDATE tasks SET interaction_generation = -1 WHERE id = 'task_open'`,
		`UPDATE leases SET connection_generation = -1`,
	} {
		_, err := rw.Exec(q)
		require.ErrorContains(t, err, "never decreases", q)
	}
	var plan []string
	for _, r := range queryAll(t, raw, `EXPLAIN QUERY PLAN SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 20`) {
		plan = append(plan, r[3].(string))
	}
	require.Contains(t, strings.Join(plan, "; "), "runs_started", "the listing reads the index")
	require.NotContains(t, strings.Join(plan, "; "), "TEMP B-TREE", "the listing sorts nothing")
}

// withoutEleven is a snapshot of a ledger at schema version 11 or later
// with what migration 0011 adds taken out again: the runs' index by start
// time; the tasks' connection and interaction generations and the leases'
// connection generation (their last columns, each 0 in a row recorded
// before), with the triggers that keep them; and its schema_migrations row
// (and those of later migrations).
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
	for _, trig := range []string{"actions_own_task_insert", "actions_own_task_update", "tasks_generations_grow", "leases_connection_grows"} {
		_, ok := s.Objects[trig]
		require.True(tb, ok, "migration 0011's trigger %s", trig)
		delete(s.Objects, trig)
	}
	for table, cols := range map[string][]string{"tasks": {"connection_generation", "interaction_generation"}, "leases": {"connection_generation"}} {
		o := s.Objects[table]
		added := ""
		for _, c := range cols {
			added += ", " + c + " INTEGER NOT NULL DEFAULT 0"
		}
		require.True(tb, strings.HasSuffix(o.SQL.String, added+")"), "%s: %s", table, o.SQL.String)
		o.SQL.String = strings.TrimSuffix(o.SQL.String, added+")") + ")"
		s.Objects[table] = o
		shape := s.Shapes[table]
		n := len(shape.Columns) - len(cols)
		for i, c := range cols {
			require.Equal(tb, c, shape.Columns[n+i][1], "the last columns of %s", table)
		}
		shape.Columns = shape.Columns[:n]
		s.Shapes[table] = shape
		rows := make([][]any, len(s.Rows[table]))
		for i, r := range s.Rows[table] {
			m := len(r) - len(cols)
			rows[i] = r[:m]
		}
		s.Rows[table] = rows
	}
	// The backfill: each task's owner is the newest generation that wrote
	// one of its actions, when newer than the one it held.
	newest := map[string]int64{}
	for _, a := range s.Rows["actions"] {
		if id, ok := a[3].(string); ok {
			newest[id] = max(newest[id], a[18].(int64))
		}
	}
	for _, r := range s.Rows["tasks"] {
		before, ok := ownersAt7[r[1].(string)]
		require.True(tb, ok, "task %v", r[1])
		require.Equal(tb, max(before, newest[r[1].(string)]), r[6], "owner_generation of %v", r[1])
		r[6] = before
	}
	var migs [][]any
	for _, r := range s.Rows["schema_migrations"] {
		if r[1].(int64) < 11 {
			migs = append(migs, r)
		}
	}
	s.Rows["schema_migrations"] = migs
	return s
}

// ownersAt7 are the owner generations populateAt7 gives its tasks.
var ownersAt7 = map[string]int64{"task_open": 2, "task_cancelled": 0, "task_done": 3}
