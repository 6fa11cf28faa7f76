package ledger_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// A stop that held a planned action is recorded on it under the fence, at
// the ledger's time, the later one replacing the earlier; leaving planned
// (for executing, or failed) clears it; only a planned action takes one,
// and the schema refuses a stop on any other.
func TestRecordStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	l := mustLease(t, db, "op")
	f := l.Fence()
	a := walk(t, db, f, "held")
	require.Nil(t, a.LastStop, "a reserved action has no stop")

	got, err := db.RecordStop(ctx, f, a.ID, ledger.Stop{Kind: "login", Cause: "nobody is signed in", RunID: "run_1", At: time.Unix(1, 0)})
	require.NoError(t, err)
	want := &ledger.Stop{Kind: "login", Cause: "nobody is signed in", RunID: "run_1", At: c.Now()}
	require.Equal(t, want, got.LastStop, "recorded at the ledger's time, not the caller's")
	stored, err := db.GetAction(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.Planned, stored.Status)
	require.True(t, want.At.Equal(stored.LastStop.At), "%v", stored.LastStop.At)
	stored.LastStop.At = want.At
	require.Equal(t, want, stored.LastStop)
	require.Equal(t, "hard stop: login (nobody is signed in)", stored.LastStop.Reason())
	evs, err := db.Events(ctx, a.ID)
	require.NoError(t, err)
	require.Len(t, evs, 1, "a stop is no transition")

	c.Advance(time.Minute)
	_, err = db.RecordStop(ctx, f, a.ID, ledger.Stop{Kind: "the clock is behind recorded effects", RunID: "run_2"})
	require.NoError(t, err)
	list, err := db.ListActions(ctx, ledger.ActionFilter{Statuses: []ledger.Status{ledger.Planned}})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "run_2", list[0].LastStop.RunID, "the last stop replaces the one before")
	require.Equal(t, "", list[0].LastStop.Cause)
	require.Equal(t, "hard stop: the clock is behind recorded effects", list[0].LastStop.Reason())
	require.True(t, c.Now().Equal(list[0].LastStop.At))

	for name, s := range map[string]ledger.Stop{
		"no kind":           {Kind: " ", RunID: "run_3"},
		"a kind not UTF-8":  {Kind: "login\xff", RunID: "run_3"},
		"a cause not UTF-8": {Kind: "login", Cause: "\xc3", RunID: "run_3"},
		"a cause too long":  {Kind: "login", Cause: strings.Repeat("x", 4097), RunID: "run_3"},
	} {
		_, err := db.RecordStop(ctx, f, a.ID, s)
		require.ErrorIs(t, err, ledger.ErrIllegalTransition, name)
	}

	a, err = db.Transition(ctx, f, a.ID, changeTo(ledger.Executing))
	require.NoError(t, err)
	require.Nil(t, a.LastStop, "going ahead clears the stop")
	stored, err = db.GetAction(ctx, a.ID)
	require.NoError(t, err)
	require.Nil(t, stored.LastStop, "cleared on disk")
	_, err = db.RecordStop(ctx, f, a.ID, ledger.Stop{Kind: "login", RunID: "run_3"})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "an executing action is not held")

	b := walk(t, db, f, "failed before the click")
	_, err = db.RecordStop(ctx, f, b.ID, ledger.Stop{Kind: "login", RunID: "run_3"})
	require.NoError(t, err)
	b, err = db.Transition(ctx, f, b.ID, changeTo(ledger.Failed))
	require.NoError(t, err)
	require.Nil(t, b.LastStop)
	stored, err = db.GetAction(ctx, b.ID)
	require.NoError(t, err)
	require.Nil(t, stored.LastStop, "settling clears it too")

	// A stale generation writes nothing.
	d := walk(t, db, f, "fenced out")
	c.Advance(2 * time.Minute)
	_, err = db.AcquireLease(ctx, "browser-operator", "new", time.Minute)
	require.NoError(t, err)
	_, err = db.RecordStop(ctx, f, d.ID, ledger.Stop{Kind: "login", RunID: "run_3"})
	require.ErrorIs(t, err, ledger.ErrStaleGeneration)
	stored, err = db.GetAction(ctx, d.ID)
	require.NoError(t, err)
	require.Nil(t, stored.LastStop)

	// The schema itself keeps a stop off an action that is not planned.
	raw, err := sql.Open("sqlite3", "file:"+db.Path())
	require.NoError(t, err)
	defer raw.Close()
	_, err = raw.Exec(`UPDATE actions SET last_stop_kind = 'login', last_stop_at = 1 WHERE id = ?`, a.ID)
	require.ErrorContains(t, err, "only a planned action is held by a stop")
}

// Migration 0010 on a ledger holding data at version 9: every action
// starts with no stop, the ledger records one on a planned action and
// clears it when it goes ahead, and the schema refuses a stop on an action
// in any other status.
func TestMigrationTenAddsLastStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	populatedAt(t, path, 9)

	before := snapshot(t, path)

	c := newClock()
	db := MustOpenAt(t, path, c)
	v, err := db.SchemaVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, ledger.LatestSchemaVersion(), v)
	after := withoutTen(t, withoutEleven(t, withoutTabFacts(t, withoutFieldProvenance(t, withoutContinuity(t, withoutCleanupPreference(t, snapshot(t, path)))))))
	for name, o := range before.Objects {
		got, ok := after.Objects[name]
		require.True(t, ok, "%s %s is kept", o.Type, name)
		if o.Type == "table" {
			require.Equal(t, o.Table, got.Table, name)
			continue
		}
		require.Equal(t, o, got, "%s %s is as it was", o.Type, name)
	}
	require.Equal(t, len(before.Objects), len(after.Objects), "one object more: the trigger")
	require.Equal(t, before.Shapes, after.Shapes, "every table keeps its columns, references and indexes")
	require.Equal(t, before.Rows, after.Rows, "every row, with its rowid")
	all, err := db.ListActions(ctx, ledger.ActionFilter{})
	require.NoError(t, err)
	require.Len(t, all, 6, "every action kept")
	for _, a := range all {
		require.Nil(t, a.LastStop, a.ID)
	}

	l := mustLease(t, db, "op")
	got, err := db.RecordStop(ctx, l.Fence(), "act_planned", ledger.Stop{Kind: "login", Cause: "identity.selector matched nothing", RunID: "run_3"})
	require.NoError(t, err)
	require.Equal(t, "login", got.LastStop.Kind)
	stored, err := db.GetAction(ctx, "act_planned")
	require.NoError(t, err)
	require.Equal(t, "identity.selector matched nothing", stored.LastStop.Cause)
	require.Equal(t, "run_3", stored.LastStop.RunID)
	_, err = db.RecordStop(ctx, l.Fence(), "act_executing", ledger.Stop{Kind: "login", RunID: "run_3"})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition)
	got, err = db.Transition(ctx, l.Fence(), "act_planned", changeTo(ledger.Executing))
	require.NoError(t, err)
	require.Nil(t, got.LastStop)
	require.NoError(t, db.Close())

	raw, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(t, err)
	defer raw.Close()
	var kind, cause, run string
	var at sql.NullInt64
	require.NoError(t, raw.QueryRow(`SELECT last_stop_kind, last_stop_cause, last_stop_run_id, last_stop_at FROM actions WHERE id = 'act_planned'`).
		Scan(&kind, &cause, &run, &at))
	require.Equal(t, []string{"", "", ""}, []string{kind, cause, run}, "cleared when it went ahead")
	require.False(t, at.Valid)
	var name string
	require.NoError(t, raw.QueryRow(`SELECT name FROM schema_migrations WHERE version = 10`).Scan(&name))
	require.Equal(t, "action_last_stop", name)
	for _, id := range []string{"act_planned", "act_ambiguous"} {
		_, err := raw.Exec(`UPDATE actions SET last_stop_kind = 'login', last_stop_at = 1 WHERE id = ?`, id)
		require.ErrorContains(t, err, "only a planned action is held by a stop", id)
	}
}

// lastStopColumns are the columns migration 0010 adds to actions, in
// order, each with the value a row recorded before it holds.
var lastStopColumns = []struct {
	name  string
	value any
}{{"last_stop_kind", ""}, {"last_stop_cause", ""}, {"last_stop_run_id", ""}, {"last_stop_at", nil}}

// withoutTen is a snapshot of a ledger at schema version 10 with what
// migration 0010 adds taken out again: the actions' last_stop_ columns
// (the last four), after checking that every row holds no stop, its
// trigger, and its schema_migrations row. The rest is then as it was at
// version 9.
func withoutTen(tb testing.TB, s ledgerSnapshot) ledgerSnapshot {
	tb.Helper()
	_, ok := s.Objects["actions_last_stop_planned"]
	require.True(tb, ok, "migration 0010's trigger")
	delete(s.Objects, "actions_last_stop_planned")
	shape := s.Shapes["actions"]
	n := len(shape.Columns) - len(lastStopColumns)
	for i, col := range lastStopColumns {
		require.Equal(tb, col.name, shape.Columns[n+i][1], "the actions' last columns")
	}
	shape.Columns = shape.Columns[:n]
	s.Shapes["actions"] = shape
	rows := make([][]any, len(s.Rows["actions"]))
	for i, r := range s.Rows["actions"] {
		m := len(r) - len(lastStopColumns)
		for j, col := range lastStopColumns {
			require.Equal(tb, col.value, r[m+j], "%s of action row %v", col.name, r[0])
		}
		rows[i] = r[:m]
	}
	s.Rows["actions"] = rows
	var migs [][]any
	for _, r := range s.Rows["schema_migrations"] {
		if r[1].(int64) < 10 {
			migs = append(migs, r)
		}
	}
	s.Rows["schema_migrations"] = migs
	return s
}
