package ledger_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
)

// cleanupMigration is the version of NNNN_cleanup_preference.sql.
func cleanupMigration(tb testing.TB) int {
	tb.Helper()
	entries, err := os.ReadDir("migrations")
	require.NoError(tb, err)
	for i, e := range entries {
		if strings.HasSuffix(e.Name(), "_cleanup_preference.sql") {
			return i + 1
		}
	}
	tb.Fatal("no migration NNNN_cleanup_preference.sql")
	return 0
}

// cleanupColumns is what the cleanup migration adds to the tabs table's
// definition, as SQLite keeps it.
const cleanupColumns = `, purpose TEXT NOT NULL DEFAULT 'pass'
    CHECK (purpose IN ('pass', 'doctor', 'sites_check', 'login')), blocker TEXT NOT NULL DEFAULT '', kept_reason TEXT NOT NULL DEFAULT '', shown INTEGER NOT NULL DEFAULT 0 CHECK (shown IN (0, 1)), typed INTEGER NOT NULL DEFAULT 0 CHECK (typed IN (0, 1))`

// withoutCleanupPreference is a snapshot of a ledger with what the cleanup
// migration adds taken out again: its two tables, the tab state kept, the
// tabs' five last columns (each at its default in a row recorded before),
// and its schema_migrations row. Earlier migrations' tests compare the
// rest with what they left.
func withoutCleanupPreference(tb testing.TB, s ledgerSnapshot) ledgerSnapshot {
	tb.Helper()
	v := cleanupMigration(tb)
	for _, table := range []string{"cleanup_preferences", "tab_uses"} {
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
	var states [][]any
	for _, r := range s.Rows["tab_states"] {
		if r[1] != string(ledger.TabKept) {
			states = append(states, r)
		}
	}
	s.Rows["tab_states"] = states
	o := s.Objects["tabs"]
	require.Contains(tb, o.SQL.String, cleanupColumns)
	o.SQL.String = strings.Replace(o.SQL.String, cleanupColumns, "", 1)
	s.Objects["tabs"] = o
	cols := []string{"purpose", "blocker", "kept_reason", "shown", "typed"}
	defaults := []any{"pass", "", "", int64(0), int64(0)}
	shape := s.Shapes["tabs"]
	n := len(shape.Columns) - len(cols)
	for i, c := range cols {
		require.Equal(tb, c, shape.Columns[n+i][1], "the last columns of tabs")
	}
	shape.Columns = shape.Columns[:n]
	s.Shapes["tabs"] = shape
	rows := make([][]any, len(s.Rows["tabs"]))
	for i, r := range s.Rows["tabs"] {
		m := len(r) - len(cols)
		require.Equal(tb, defaults, r[m:], "tab row %v before the migration", r[0])
		rows[i] = r[:m]
	}
	s.Rows["tabs"] = rows
	var migs [][]any
	for _, r := range s.Rows["schema_migrations"] {
		if r[1].(int64) != int64(v) {
			migs = append(migs, r)
		}
	}
	s.Rows["schema_migrations"] = migs
	return s
}

// The cleanup migration on a ledger holding data at the version before
// it: every table and row is kept, no preference is known.
func TestMigrationCleanupPreference(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := cleanupMigration(t)
	require.Equal(t, 14, v)
	path := filepath.Join(t.TempDir(), "ledger.db")
	populatedAt(t, path, v-1)
	before := snapshot(t, path)
	db := MustOpenAt(t, path, newClock())
	after := withoutCleanupPreference(t, withoutContinuity(t, snapshot(t, path)))
	for name, o := range before.Objects {
		require.Equal(t, o, after.Objects[name], "%s %s is as it was", o.Type, name)
	}
	require.Equal(t, before.Rows, after.Rows)
	set, err := db.CleanupSettingOf(ctx, "")
	require.NoError(t, err)
	require.False(t, set.Known(), "never defaulted")
	tabs, err := db.ListTabs(ctx, "")
	require.NoError(t, err)
	require.NotEmpty(t, tabs)
	for _, tab := range tabs {
		require.Equal(t, ledger.PurposePass, tab.Purpose, "every earlier record is a pass's")
	}
}

func TestCleanupPreference(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	set, err := db.CleanupSettingOf(ctx, "/p")
	require.NoError(t, err)
	require.Equal(t, ledger.CleanupUnknown, set.Preference, "unknown until the person chooses")
	require.Nil(t, set.AskedAt)

	t.Run("AskedOnce", func(t *testing.T) {
		require.NoError(t, db.MarkCleanupAsked(ctx, "/p"))
		set, err := db.CleanupSettingOf(ctx, "/p")
		require.NoError(t, err)
		require.NotNil(t, set.AskedAt)
		require.False(t, set.Known(), "asking chooses nothing")
	})
	t.Run("OK", func(t *testing.T) {
		set, err := db.SetCleanupPreference(ctx, "/p", ledger.CleanupSubmittedOnly, "cli")
		require.NoError(t, err)
		require.Equal(t, ledger.CleanupSubmittedOnly, set.Preference)
		require.Equal(t, "cli", set.SetBy)
		require.NotNil(t, set.AskedAt, "the question stays asked")
		other, err := db.CleanupSettingOf(ctx, "/other")
		require.NoError(t, err)
		require.False(t, other.Known(), "per profile")
	})
	t.Run("ErrBadPreference", func(t *testing.T) {
		for _, bad := range []ledger.CleanupPreference{ledger.CleanupUnknown, "always", "NEVER"} {
			_, err := db.SetCleanupPreference(ctx, "/p", bad, "cli")
			require.ErrorIs(t, err, ledger.ErrBadPreference, "%q", bad)
		}
		set, err := db.CleanupSettingOf(ctx, "/p")
		require.NoError(t, err)
		require.Equal(t, ledger.CleanupSubmittedOnly, set.Preference, "a refused value changes nothing")
	})
}

// Each preference against each kind of tab: what it may close, and that
// anything not covered stays (with why).
func TestCleanupAllows(t *testing.T) {
	t.Parallel()
	probe := ledger.TabDisposition{Purpose: ledger.PurposePass}
	captcha := ledger.TabDisposition{Purpose: ledger.PurposePass, Blocker: "captcha"}
	submitted := ledger.TabDisposition{Purpose: ledger.PurposePass, Uses: []ledger.Status{ledger.Verified, ledger.Verified}}
	draft := ledger.TabDisposition{Purpose: ledger.PurposePass, Uses: []ledger.Status{ledger.Verified, ledger.Failed}}
	// Sent, its outcome being reconciled: the tab's proven close rules out
	// a late click, so it is a submitted tab.
	ambiguous := ledger.TabDisposition{Purpose: ledger.PurposePass, Uses: []ledger.Status{ledger.Ambiguous}}
	executing := ledger.TabDisposition{Purpose: ledger.PurposePass, Uses: []ledger.Status{ledger.Verified, ledger.Executing}}
	planned := ledger.TabDisposition{Purpose: ledger.PurposePass, Uses: []ledger.Status{ledger.Planned}}
	typed := ledger.TabDisposition{Purpose: ledger.PurposeSitesCheck, Filled: true}
	shown := ledger.TabDisposition{Purpose: ledger.PurposeLogin, Shown: true}
	doctor := ledger.TabDisposition{Purpose: ledger.PurposeDoctor}
	for _, tc := range []struct {
		name string
		p    ledger.CleanupPreference
		d    ledger.TabDisposition
		want bool
		why  string
	}{
		{"unknown submitted", ledger.CleanupUnknown, submitted, false, ledger.KeptNoPreference},
		{"unknown captcha", ledger.CleanupUnknown, captcha, false, ledger.KeptNoPreference},
		{"never submitted", ledger.CleanupNever, submitted, false, ledger.KeptNever},
		{"never probe", ledger.CleanupNever, probe, false, ledger.KeptNever},
		{"submitted_only submitted", ledger.CleanupSubmittedOnly, submitted, true, ""},
		{"submitted_only captcha", ledger.CleanupSubmittedOnly, captcha, false, ledger.KeptProbe},
		{"submitted_only probe", ledger.CleanupSubmittedOnly, probe, false, ledger.KeptProbe},
		{"submitted_only draft", ledger.CleanupSubmittedOnly, draft, false, ledger.KeptUnverified},
		{"submitted_only ambiguous", ledger.CleanupSubmittedOnly, ambiguous, true, ""},
		{"submitted_only executing", ledger.CleanupSubmittedOnly, executing, true, ""},
		{"submitted_only planned", ledger.CleanupSubmittedOnly, planned, false, ledger.KeptUnverified},
		{"never executing", ledger.CleanupNever, executing, false, ledger.KeptNever},
		{"probe_blockers submitted", ledger.CleanupSubmittedAndProbeBlockers, submitted, true, ""},
		{"probe_blockers captcha", ledger.CleanupSubmittedAndProbeBlockers, captcha, true, ""},
		{"probe_blockers probe", ledger.CleanupSubmittedAndProbeBlockers, probe, true, ""},
		{"probe_blockers doctor", ledger.CleanupSubmittedAndProbeBlockers, doctor, true, ""},
		{"probe_blockers draft", ledger.CleanupSubmittedAndProbeBlockers, draft, false, ledger.KeptUnverified},
		{"probe_blockers typed", ledger.CleanupSubmittedAndProbeBlockers, typed, false, ledger.KeptUnverified},
		{"probe_blockers shown", ledger.CleanupSubmittedAndProbeBlockers, shown, false, ledger.KeptShown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := ledger.CleanupAllows(tc.p, tc.d)
			require.Equal(t, tc.want, got, why)
			if !tc.want {
				require.Equal(t, tc.why, why)
			}
		})
	}
}

// A probe record is written without the lease (by a command), a pass's
// record never is; a kept record needs its reason; uses and provenance
// make the disposition.
func TestProbeRecordsAndUses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	_, err := db.RecordTab(ctx, ledger.Fence{}, ledger.Tab{TargetID: "T0", URL: "http://127.0.0.1/", BindingHash: "bh"})
	require.ErrorIs(t, err, ledger.ErrStaleGeneration, "a pass's record needs the fence")
	probe, err := db.RecordTab(ctx, ledger.Fence{}, ledger.Tab{TargetID: "T1", URL: "http://127.0.0.1/", BindingHash: "bh", Purpose: ledger.PurposeDoctor})
	require.NoError(t, err)
	require.Equal(t, int64(0), probe.Generation)
	_, err = db.UpdateTab(ctx, ledger.Fence{}, probe.ID, ledger.TabChange{State: ledger.TabKept})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "kept without a reason")
	probe, err = db.UpdateTab(ctx, ledger.Fence{}, probe.ID, ledger.TabChange{State: ledger.TabKept, KeptReason: ledger.KeptNever, Blocker: "captcha"})
	require.NoError(t, err)
	require.Equal(t, ledger.TabKept, probe.State)
	require.Equal(t, "captcha", probe.Blocker)
	got, err := db.GetTab(ctx, probe.ID)
	require.NoError(t, err)
	require.Equal(t, probe.KeptReason, got.KeptReason)
	_, err = db.UpdateTab(ctx, ledger.Fence{}, probe.ID, ledger.TabChange{State: ledger.TabLive})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "a kept tab is never taken up again")

	l := mustLease(t, db, "op")
	pass, err := db.RecordTab(ctx, l.Fence(), ledger.Tab{TargetID: "T2", URL: "http://127.0.0.1/", BindingHash: "bh"})
	require.NoError(t, err)
	_, err = db.UpdateTab(ctx, ledger.Fence{}, pass.ID, ledger.TabChange{State: ledger.TabKept, KeptReason: ledger.KeptNever})
	require.ErrorIs(t, err, ledger.ErrStaleGeneration, "a pass's record is written only under the fence")
	a := mustReserve(t, db, l.Fence(), postIntent("cleanup uses"))
	require.NoError(t, db.RecordTabUse(ctx, l.Fence(), pass.ID, 1, a.ID))
	require.NoError(t, db.RecordTabUse(ctx, l.Fence(), pass.ID, 1, a.ID), "twice changes nothing")
	d, err := db.TabDispositionOf(ctx, pass)
	require.NoError(t, err)
	require.Equal(t, []ledger.Status{a.Status}, d.Uses)
	ok, why := ledger.CleanupAllows(ledger.CleanupSubmittedAndProbeBlockers, d)
	require.False(t, ok, "an action prepared in it is not verified: %s", why)
}
