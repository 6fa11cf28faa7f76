package ledger_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// Sights of one surface's inventory.
var (
	listedIn   = ledger.Sight{Taken: true, Complete: true, Listed: true}
	absentFrom = ledger.Sight{Taken: true, Complete: true}
	incomplete = ledger.Sight{Taken: true}
	notTaken   = ledger.Sight{}
)

func inventory(kind ledger.TabFactKind, controller, person ledger.Sight) ledger.TabFact {
	return ledger.TabFact{Kind: kind, Controller: controller, Person: person}
}

func receipt(sent, confirmed, gone bool) ledger.TabFact {
	return ledger.TabFact{Kind: ledger.FactCloseReceipt, Sent: sent, Confirmed: confirmed, Gone: gone}
}

// provenClose is the facts of a proven close: listed by both complete
// inventories before, a confirmed receipt, absent from both after.
func provenClose() []ledger.TabFact {
	return []ledger.TabFact{
		inventory(ledger.FactInventoryReconciled, listedIn, listedIn),
		receipt(true, true, false),
		inventory(ledger.FactPostCloseAbsent, absentFrom, absentFrom),
	}
}

// TestCloseProof holds what each set of facts of the current epoch proves.
func TestCloseProof(t *testing.T) {
	t.Parallel()
	before := inventory(ledger.FactInventoryReconciled, listedIn, listedIn)
	confirmed := receipt(true, true, false)
	after := inventory(ledger.FactPostCloseAbsent, absentFrom, absentFrom)
	for _, tc := range []struct {
		name  string
		facts []ledger.TabFact
		want  ledger.TabState
		why   string
	}{
		{"OK", provenClose(), ledger.TabClosedVerified, "close confirmed"},
		{"NoFacts", nil, "", "no close in epoch 2"},
		{"AfterIncomplete", []ledger.TabFact{before, confirmed, inventory(ledger.FactPostCloseAbsent, absentFrom, incomplete)},
			ledger.TabClosureUnverified, "after the close was not complete (controller: complete, without the tab; person: incomplete)"},
		{"AfterControllerOnly", []ledger.TabFact{before, confirmed, inventory(ledger.FactPostCloseAbsent, absentFrom, notTaken)},
			ledger.TabClosureUnverified, "person: not taken"},
		{"AfterPersonStillHasIt", []ledger.TabFact{before, confirmed, inventory(ledger.FactPostCloseAbsent, absentFrom, listedIn)},
			ledger.TabClosureUnverified, "still listed"},
		{"NoAfter", []ledger.TabFact{before, confirmed}, ledger.TabClosureUnverified, "no inventory was taken after"},
		{"AbsenceBeforeTheReceipt", []ledger.TabFact{before, after, confirmed}, ledger.TabClosureUnverified, "no inventory was taken after"},
		{"NoBefore", []ledger.TabFact{confirmed, after}, ledger.TabClosureUnverified, "no inventory was reconciled"},
		{"BeforeIncomplete", []ledger.TabFact{inventory(ledger.FactInventoryReconciled, listedIn, incomplete), confirmed, after},
			ledger.TabClosureUnverified, "before the close was not complete"},
		{"BeforeNotListed", []ledger.TabFact{inventory(ledger.FactInventoryReconciled, absentFrom, absentFrom), confirmed, after},
			ledger.TabClosureUnverified, "did not list the tab"},
		{"NotConfirmed", []ledger.TabFact{before, receipt(true, false, false), after}, ledger.TabClosureUnverified, "not confirmed"},
		{"GoneThenAbsent", []ledger.TabFact{before, receipt(false, true, true), after}, ledger.TabMissing, "gone before it was closed"},
		{"GoneNotProven", []ledger.TabFact{before, receipt(false, true, true), inventory(ledger.FactPostCloseAbsent, absentFrom, incomplete)},
			ledger.TabClosureUnverified, "no complete controller and person inventory"},
		{"AbsentWithoutClose", []ledger.TabFact{inventory(ledger.FactInventoryReconciled, absentFrom, absentFrom)}, ledger.TabMissing, "no close"},
		{"SingleSurfaceAbsence", []ledger.TabFact{inventory(ledger.FactInventoryReconciled, absentFrom, notTaken)}, "", "no close"},
		{"LaterAttemptProves", append([]ledger.TabFact{before, receipt(true, false, false), inventory(ledger.FactPostCloseAbsent, incomplete, incomplete)}, provenClose()...),
			ledger.TabClosedVerified, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ledger.Tab{ID: 7, Epoch: 2}
			for i := range tc.facts {
				tc.facts[i].TabID, tc.facts[i].Epoch, tc.facts[i].Seq = 7, 2, int64(i+1)
			}
			got, why := ledger.CloseProof(rec, tc.facts)
			require.Equal(t, tc.want, got, why)
			require.Contains(t, why, tc.why)

			// The same facts in the epoch before prove nothing now.
			for i := range tc.facts {
				tc.facts[i].Epoch = 1
			}
			got, _ = ledger.CloseProof(rec, tc.facts)
			require.Equal(t, ledger.TabState(""), got, "an earlier epoch's facts")
		})
	}
}

// TestClosedVerifiedNeedsFacts: the ledger refuses closed_verified unless
// the facts of the record's current epoch prove it, files a fact only
// under the current epoch, and names what is wrong with a bad fact.
func TestClosedVerifiedNeedsFacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	f := mustLease(t, db, "op").Fence()
	rec, err := db.RecordTab(ctx, f, ledger.Tab{RunID: "run_1", TargetID: "RAW-1", URL: "http://127.0.0.1/", BindingHash: "bh"})
	require.NoError(t, err)

	_, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabClosedVerified})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "no facts")
	require.ErrorContains(t, err, "no close in epoch 1")

	state, err := db.RecordTabFacts(ctx, f, rec.ID, 1, inventory(ledger.FactInventoryReconciled, listedIn, listedIn),
		receipt(true, true, false), inventory(ledger.FactPostCloseAbsent, absentFrom, incomplete))
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosureUnverified, state)
	_, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabClosedVerified})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "the person's inventory after was incomplete")
	rec, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabClosureUnverified})
	require.NoError(t, err)

	// Proven in epoch 1, but the record moves to epoch 2 with the change.
	state, err = db.RecordTabFacts(ctx, f, rec.ID, 1, provenClose()...)
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosedVerified, state)
	_, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabClosedVerified, TargetID: "RAW-2", NewEpoch: true})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "an earlier epoch's proof")
	rec, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{TargetID: "RAW-2", NewEpoch: true})
	require.NoError(t, err)
	require.Equal(t, 2, rec.Epoch)
	_, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabClosedVerified})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "epoch 1's proof in epoch 2")
	_, err = db.RecordTabFacts(ctx, f, rec.ID, 1, provenClose()...)
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "facts filed under an epoch that is over")

	for _, bad := range []struct {
		fact ledger.TabFact
		says string
	}{
		{ledger.TabFact{Kind: "seen"}, `unknown tab fact "seen"`},
		{inventory(ledger.FactPostCloseAbsent, notTaken, notTaken), "needs an inventory taken"},
		{inventory(ledger.FactPostCloseAbsent, ledger.Sight{Listed: true}, absentFrom), "an inventory not taken"},
		{ledger.TabFact{Kind: ledger.FactCloseReceipt, Sent: true, Person: listedIn}, "a close receipt carries no inventory"},
		{ledger.TabFact{Kind: ledger.FactInventoryReconciled, Controller: listedIn, Sent: true}, "carries no receipt"},
	} {
		_, err = db.RecordTabFacts(ctx, f, rec.ID, 2, bad.fact)
		require.ErrorContains(t, err, bad.says)
	}

	state, err = db.RecordTabFacts(ctx, f, rec.ID, 2, provenClose()...)
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosedVerified, state)
	closed, err := db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabClosedVerified})
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosedVerified, closed.State)

	facts, err := db.TabFacts(ctx, rec.ID)
	require.NoError(t, err)
	require.Len(t, facts, 9, "every fact recorded, each epoch's")
	require.Equal(t, 1, facts[0].Epoch)
	require.Equal(t, 2, facts[8].Epoch)
	require.Equal(t, incomplete, facts[2].Person, "an incomplete inventory reads back as such")
	require.Equal(t, notTaken, facts[1].Person, "a receipt has no inventory")
	require.True(t, facts[7].Sent && facts[7].Confirmed && !facts[7].Gone)
	for i := 1; i < len(facts); i++ {
		require.Greater(t, facts[i].Seq, facts[i-1].Seq, "in the order recorded")
	}

	raw, err := sql.Open("sqlite3", "file:"+db.Path())
	require.NoError(t, err)
	defer raw.Close()
	_, err = raw.Exec(`UPDATE tab_facts SET person_complete = 1`)
	require.ErrorContains(t, err, "tab facts never change")
	_, err = raw.Exec(`INSERT INTO tab_facts (tab_id, epoch, kind, controller_complete, controller_listed, generation, at)
		VALUES (?, 1, 'post_close_absent', 1, 0, 1, 1)`, rec.ID)
	require.ErrorContains(t, err, "current epoch", "the schema files no fact under an epoch that is over")
	_, err = raw.Exec(`INSERT INTO tab_facts (tab_id, epoch, kind, controller_complete, controller_listed, generation, at)
		VALUES (?, 2, 'seen', 1, 0, 1, 1)`, rec.ID)
	require.ErrorContains(t, err, "unknown tab fact")
	var kinds []string
	rows, err := raw.Query(`SELECT kind FROM tab_fact_kinds`)
	require.NoError(t, err)
	for rows.Next() {
		var k string
		require.NoError(t, rows.Scan(&k))
		kinds = append(kinds, k)
	}
	require.NoError(t, rows.Err())
	require.ElementsMatch(t, []string{string(ledger.FactInventoryReconciled), string(ledger.FactCloseReceipt), string(ledger.FactPostCloseAbsent)}, kinds)
}

// TestPruneTabs: records proven closed go after their retention period,
// facts and raw target id with them; any other record stays, however old.
func TestPruneTabs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, clk := MustOpen(t)
	f := mustLease(t, db, "op").Fence()
	record := func(target string, state ledger.TabState) ledger.Tab {
		t.Helper()
		rec, err := db.RecordTab(ctx, f, ledger.Tab{RunID: "run_1", TargetID: target, URL: "http://127.0.0.1/", BindingHash: "bh-" + target})
		require.NoError(t, err)
		if state == ledger.TabClosedVerified {
			_, err = db.RecordTabFacts(ctx, f, rec.ID, rec.Epoch, provenClose()...)
			require.NoError(t, err)
		}
		if state != ledger.TabLive {
			rec, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: state})
			require.NoError(t, err)
		}
		return rec
	}
	old := record("RAW-OLD", ledger.TabClosedVerified)
	unverified := record("RAW-UNVERIFIED", ledger.TabClosureUnverified)
	missing := record("RAW-MISSING", ledger.TabMissing)
	live := record("RAW-LIVE", ledger.TabLive)
	handedOff := record("RAW-HANDOFF", ledger.TabClosedVerified)
	a := mustReserve(t, db, f, postIntent("handed over"))
	_, err := db.RequestHandoffConfirmation(ctx, f, a.ID, ledger.Handoff{TabID: handedOff.ID, PageURL: "http://127.0.0.1/compose", At: clk.Now()})
	require.NoError(t, err)
	clk.Advance(ledger.DefaultTabRetention + time.Hour)
	recent := record("RAW-RECENT", ledger.TabClosedVerified)

	n, err := db.PruneTabs(ctx, f, clk.Now().Add(-ledger.DefaultTabRetention))
	require.NoError(t, err)
	require.Equal(t, 1, n, "the old closed record")
	_, err = db.GetTab(ctx, old.ID)
	require.ErrorIs(t, err, ledger.ErrNotFound)
	facts, err := db.TabFacts(ctx, old.ID)
	require.NoError(t, err)
	require.Empty(t, facts)
	for _, rec := range []ledger.Tab{unverified, missing, live, recent, handedOff} {
		got, err := db.GetTab(ctx, rec.ID)
		require.NoError(t, err, "record %d (%s) is kept", rec.ID, rec.State)
		require.Equal(t, rec.TargetID, got.TargetID)
	}
	n, err = db.PruneTabs(ctx, f, clk.Now().Add(-ledger.DefaultTabRetention))
	require.NoError(t, err)
	require.Zero(t, n, "pruning twice prunes nothing more")

	raw, err := sql.Open("sqlite3", "file:"+db.Path())
	require.NoError(t, err)
	defer raw.Close()
	_, err = raw.Exec(`DELETE FROM tabs WHERE id = ?`, unverified.ID)
	require.ErrorContains(t, err, "not proven closed is kept", "the schema keeps a record not proven closed")
}

// TestMigrationTabFacts: the migration that adds tab facts (found by its
// file's name, whatever its number) keeps every tab record as it was,
// records proven closed before it included, and from then on a record
// becomes closed_verified only on facts.
func TestMigrationTabFacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	entries, err := os.ReadDir("migrations")
	require.NoError(t, err)
	v := -1
	for i, e := range entries {
		if strings.HasSuffix(e.Name(), "_tab_facts.sql") {
			v = i // the version before it
		}
	}
	require.GreaterOrEqual(t, v, 9, "the tab facts migration")
	path := filepath.Join(t.TempDir(), "ledger.db")
	populatedAt(t, path, v)
	before := snapshot(t, path)

	db := MustOpenAt(t, path, newClock())
	after := withoutCleanupPreference(t, snapshot(t, path))
	require.Equal(t, before.Rows["tabs"], after.Rows["tabs"], "every tab record, with its id")
	require.Equal(t, before.Shapes["tabs"], after.Shapes["tabs"], "the tabs table as it was")
	require.Equal(t, before.Rows["confirmations"], after.Rows["confirmations"])
	require.Empty(t, after.Rows["tab_facts"])

	old, err := db.GetTab(ctx, 11)
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosedVerified, old.State, "proven closed before facts were kept: it stays so")
	l := mustLease(t, db, "op")
	_, err = db.UpdateTab(ctx, l.Fence(), 12, ledger.TabChange{State: ledger.TabClosedVerified})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "closure_unverified -> closed_verified without facts")
	_, err = db.RecordTabFacts(ctx, l.Fence(), 12, 3, provenClose()...)
	require.NoError(t, err)
	rec, err := db.UpdateTab(ctx, l.Fence(), 12, ledger.TabChange{State: ledger.TabClosedVerified})
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosedVerified, rec.State)
}

// withoutTabFacts is a snapshot of a ledger with what the tab facts
// migration adds taken out again: its two tables and their index and
// triggers, and the trigger that keeps tab records not proven closed.
// Earlier migrations' tests compare the rest with what they left.
func withoutTabFacts(tb testing.TB, s ledgerSnapshot) ledgerSnapshot {
	tb.Helper()
	for _, name := range []string{"tab_fact_kinds", "tab_facts", "tab_facts_tab", "tab_fact_kinds_no_update",
		"tab_fact_kinds_no_delete", "tab_facts_kind_known", "tab_facts_current_epoch", "tab_facts_shape",
		"tab_facts_no_update", "tab_facts_pruned_only", "tabs_pruned_only", "sqlite_autoindex_tab_fact_kinds_1"} {
		_, ok := s.Objects[name]
		require.True(tb, ok, "the tab facts migration's %s", name)
		delete(s.Objects, name)
		delete(s.Shapes, name)
		delete(s.Rows, name)
	}
	return s
}
