package ledger_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// fp is a field fingerprint for the tests: 64 hex digits.
func fp(c byte) string { return strings.Repeat(string(c), 64) }

// A field browserop filled is agent_filled and may be recorded again (its
// own retry); once user_edited or unknown_external_change it keeps that
// state, in the ledger and in the schema; records are per action, tab
// record, epoch and field, written under the fence, for the tab's epoch
// only, and never deleted.
func TestFieldProvenance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	l := mustLease(t, db, "op")
	f := l.Fence()
	a := walk(t, db, f, "provenance")
	tab, err := db.RecordTab(ctx, f, ledger.Tab{RunID: "run_1", TargetID: "RAW", URL: "http://127.0.0.1/compose", BindingHash: "bh"})
	require.NoError(t, err)
	k := ledger.FieldKey{ActionID: a.ID, TabID: tab.ID, Epoch: tab.Epoch, Field: fp('a')}

	_, err = db.FieldProvenanceOf(ctx, k)
	require.ErrorIs(t, err, ledger.ErrNotFound)
	got, err := db.RecordFieldProvenance(ctx, f, k, ledger.FieldAgentFilled)
	require.NoError(t, err)
	require.Equal(t, ledger.FieldAgentFilled, got.State)
	require.Equal(t, k, got.FieldKey)
	require.Equal(t, f.Generation, got.Generation)
	require.True(t, c.Now().Equal(got.CreatedAt))

	c.Advance(time.Second)
	again, err := db.RecordFieldProvenance(ctx, f, k, ledger.FieldAgentFilled)
	require.NoError(t, err, "its own retry fills its own field again")
	require.True(t, got.CreatedAt.Equal(again.CreatedAt))
	require.True(t, c.Now().Equal(again.UpdatedAt))

	edited, err := db.RecordFieldProvenance(ctx, f, k, ledger.FieldUserEdited)
	require.NoError(t, err)
	require.Equal(t, ledger.FieldUserEdited, edited.State)
	for _, s := range []ledger.FieldState{ledger.FieldAgentFilled, ledger.FieldUnknownChange} {
		_, err = db.RecordFieldProvenance(ctx, f, k, s)
		require.ErrorIs(t, err, ledger.ErrIllegalTransition, "user_edited -> %s", s)
	}
	_, err = db.RecordFieldProvenance(ctx, f, k, ledger.FieldUserEdited)
	require.NoError(t, err, "the same state again")

	// Another field, and the same field in the tab's next epoch, are
	// records of their own.
	u := k
	u.Field = fp('b')
	_, err = db.RecordFieldProvenance(ctx, f, u, ledger.FieldUnknownChange)
	require.NoError(t, err)
	_, err = db.RecordFieldProvenance(ctx, f, u, ledger.FieldAgentFilled)
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "unknown_external_change is never refilled")
	_, err = db.UpdateTab(ctx, f, tab.ID, ledger.TabChange{NewEpoch: true})
	require.NoError(t, err)
	_, err = db.RecordFieldProvenance(ctx, f, k, ledger.FieldAgentFilled)
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "an epoch gone by takes no record")
	next := k
	next.Epoch = 2
	_, err = db.RecordFieldProvenance(ctx, f, next, ledger.FieldAgentFilled)
	require.NoError(t, err, "a new epoch is new evidence")

	all, err := db.ActionFieldProvenance(ctx, a.ID)
	require.NoError(t, err)
	require.Len(t, all, 3)
	states := map[string]ledger.FieldState{}
	for _, p := range all {
		states[p.Field+"@"+strconv.Itoa(p.Epoch)] = p.State
	}
	require.Equal(t, map[string]ledger.FieldState{
		fp('a') + "@1": ledger.FieldUserEdited, fp('b') + "@1": ledger.FieldUnknownChange, fp('a') + "@2": ledger.FieldAgentFilled,
	}, states)

	// Bad input is refused, naming what is wrong.
	for name, tc := range map[string]struct {
		k    ledger.FieldKey
		s    ledger.FieldState
		want string
	}{
		"no action":       {ledger.FieldKey{TabID: tab.ID, Epoch: 2, Field: fp('c')}, ledger.FieldAgentFilled, "action id is empty"},
		"no tab":          {ledger.FieldKey{ActionID: a.ID, Epoch: 2, Field: fp('c')}, ledger.FieldAgentFilled, "tab record id 0"},
		"epoch 0":         {ledger.FieldKey{ActionID: a.ID, TabID: tab.ID, Field: fp('c')}, ledger.FieldAgentFilled, "inspection epoch 0"},
		"a value":         {ledger.FieldKey{ActionID: a.ID, TabID: tab.ID, Epoch: 2, Field: "the person's unsent draft"}, ledger.FieldAgentFilled, "not a fingerprint"},
		"upper case":      {ledger.FieldKey{ActionID: a.ID, TabID: tab.ID, Epoch: 2, Field: fp('A')}, ledger.FieldAgentFilled, "not a fingerprint"},
		"state":           {ledger.FieldKey{ActionID: a.ID, TabID: tab.ID, Epoch: 2, Field: fp('c')}, "parser_filled", `state "parser_filled"`},
		"unknown action":  {ledger.FieldKey{ActionID: "act_none", TabID: tab.ID, Epoch: 2, Field: fp('c')}, ledger.FieldAgentFilled, "not found"},
		"unknown tab rec": {ledger.FieldKey{ActionID: a.ID, TabID: 999, Epoch: 2, Field: fp('c')}, ledger.FieldAgentFilled, "not found"},
	} {
		_, err := db.RecordFieldProvenance(ctx, f, tc.k, tc.s)
		require.ErrorContains(t, err, tc.want, name)
	}

	// A stale generation writes nothing.
	c.Advance(2 * time.Minute)
	_, err = db.AcquireLease(ctx, "browser-operator", "new", time.Minute)
	require.NoError(t, err)
	stale := k
	stale.Epoch, stale.Field = 2, fp('d')
	_, err = db.RecordFieldProvenance(ctx, f, stale, ledger.FieldAgentFilled)
	require.ErrorIs(t, err, ledger.ErrStaleGeneration)
	_, err = db.FieldProvenanceOf(ctx, stale)
	require.ErrorIs(t, err, ledger.ErrNotFound)

	// The schema holds the same rules on any connection, and lists the
	// states Go has.
	raw, err := sql.Open("sqlite3", "file:"+db.Path())
	require.NoError(t, err)
	defer raw.Close()
	var listed []string
	for _, r := range queryAll(t, raw, `SELECT state FROM field_provenance_states`) {
		listed = append(listed, r[0].(string))
	}
	require.ElementsMatch(t, []string{string(ledger.FieldAgentFilled), string(ledger.FieldUserEdited), string(ledger.FieldUnknownChange)}, listed)
	_, err = raw.Exec(`UPDATE field_provenance SET state = 'agent_filled' WHERE field = ?`, fp('a'))
	require.ErrorContains(t, err, "never agent_filled again")
	_, err = raw.Exec(`UPDATE field_provenance SET state = 'parser_filled' WHERE field = ? AND epoch = 2`, fp('a'))
	require.ErrorContains(t, err, "unknown field provenance state")
	_, err = raw.Exec(`UPDATE field_provenance SET epoch = 3 WHERE field = ? AND epoch = 2`, fp('a'))
	require.ErrorContains(t, err, "keeps its key")
	_, err = raw.Exec(`DELETE FROM field_provenance`)
	require.ErrorContains(t, err, "never deleted")
	_, err = raw.Exec(`INSERT INTO field_provenance (action_id, tab_id, epoch, field, state, generation, created_at, updated_at)
		VALUES (?, ?, 2, 'draft text', 'agent_filled', 1, 1, 1)`, a.ID, tab.ID)
	require.ErrorContains(t, err, "CHECK constraint failed", "a field is a fingerprint, never a value")
}

// provenanceMigration is the version of the migration that adds field
// provenance, read from its file's name: the test holds whatever number
// it has.
func provenanceMigration(tb testing.TB) int {
	tb.Helper()
	entries, err := os.ReadDir("migrations")
	require.NoError(tb, err)
	for _, e := range entries {
		if num, ok := strings.CutSuffix(e.Name(), "_field_provenance.sql"); ok {
			v, err := strconv.Atoi(num)
			require.NoError(tb, err)
			return v
		}
	}
	tb.Fatal("no migration NNNN_field_provenance.sql")
	return 0
}

// The field provenance migration on a ledger holding data at the version
// before it: every table and row is kept, the two tables it adds start
// empty (the states listed), and a record is written and read back.
func TestMigrationAddsFieldProvenance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := provenanceMigration(t)
	path := filepath.Join(t.TempDir(), "ledger.db")
	populatedAt(t, path, v-1)
	before := snapshot(t, path)

	db := MustOpenAt(t, path, newClock())
	got, err := db.SchemaVersion(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, got, v)
	after := withoutContinuity(t, withoutCleanupPreference(t, snapshot(t, path)))
	added := map[string]bool{}
	for name, o := range after.Objects {
		if _, ok := before.Objects[name]; !ok {
			added[name] = true
			require.Equal(t, "field_provenance", strings.TrimSuffix(o.Table, "_states"), "%s %s belongs to the migration's tables", o.Type, name)
		}
	}
	for name, o := range before.Objects {
		require.Equal(t, o, after.Objects[name], "%s %s is as it was", o.Type, name)
	}
	require.True(t, added["field_provenance"] && added["field_provenance_states"], "%v", added)
	for name, rows := range before.Rows {
		if name == "schema_migrations" {
			continue
		}
		require.Equal(t, rows, after.Rows[name], "every row of %s, with its rowid", name)
	}
	require.Empty(t, after.Rows["field_provenance"])
	require.Len(t, after.Rows["field_provenance_states"], 3)

	l := mustLease(t, db, "op")
	k := ledger.FieldKey{ActionID: "act_planned", TabID: 5, Epoch: 1, Field: fp('e')}
	rec, err := db.RecordFieldProvenance(ctx, l.Fence(), k, ledger.FieldUnknownChange)
	require.NoError(t, err)
	require.Equal(t, ledger.FieldUnknownChange, rec.State)
	_, err = db.RecordFieldProvenance(ctx, l.Fence(), ledger.FieldKey{ActionID: "act_planned", TabID: 6, Epoch: 1, Field: fp('e')}, ledger.FieldAgentFilled)
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "tab record 6 is at epoch 2")
	require.NoError(t, db.Close())

	raw, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(t, err)
	defer raw.Close()
	var name string
	require.NoError(t, raw.QueryRow(`SELECT name FROM schema_migrations WHERE version = ?`, v).Scan(&name))
	require.Equal(t, "field_provenance", name)
}

// withoutFieldProvenance is a snapshot with what the field provenance
// migration adds taken out again (its two tables, their triggers and
// indexes, its schema_migrations row), for the tests of the migrations
// before it.
func withoutFieldProvenance(tb testing.TB, s ledgerSnapshot) ledgerSnapshot {
	tb.Helper()
	v := provenanceMigration(tb)
	for _, table := range []string{"field_provenance", "field_provenance_states"} {
		_, ok := s.Objects[table]
		require.True(tb, ok, "the migration's table %s", table)
		for name, o := range s.Objects {
			if o.Table == table {
				delete(s.Objects, name)
			}
		}
		delete(s.Shapes, table)
		delete(s.Rows, table)
	}
	var migs [][]any
	for _, r := range s.Rows["schema_migrations"] {
		if r[1].(int64) != int64(v) {
			migs = append(migs, r)
		}
	}
	s.Rows["schema_migrations"] = migs
	return s
}
