package operator_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// ownConnections makes w's runner connect to the shared browser on
// connections of its own, which the test may cut (the last made is
// returned by the function it returns), and closes them at the end.
func ownConnections(t *testing.T, w *world) func() *browser.Browser {
	portFile := filepath.Join(w.b.ProfileDir(), browser.ActivePortFileName)
	var mu sync.Mutex
	var conns []*browser.Browser
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range conns {
			b.Disconnect()
		}
	})
	w.cfg.BrowserRunning = func() bool { return true }
	w.runner = operator.NewRunner(w.db, []sites.Adapter{w.site}, w.policy, w.planner,
		func(ctx context.Context) (*browser.Browser, error) {
			b, err := browser.Attach(ctx, browser.Config{DevToolsActivePortFile: portFile, ActionTimeout: 4 * time.Second})
			if err == nil {
				mu.Lock()
				conns = append(conns, b)
				mu.Unlock()
			}
			return b, err
		}, w.cfg, nil)
	return func() *browser.Browser {
		mu.Lock()
		defer mu.Unlock()
		return conns[len(conns)-1]
	}
}

// leftByDeadPass records, under a dead pass's lease, a live record of a
// tab open on w's site whose handle that pass lost.
func leftByDeadPass(t *testing.T, w *world) (ledger.Tab, browser.TargetID) {
	ctx := context.Background()
	l, err := w.db.AcquireLease(ctx, "browser-operator", "died", time.Millisecond)
	require.NoError(t, err)
	orphan, err := w.b.NewTab(ctx, w.base+"/home")
	require.NoError(t, err)
	rec, err := w.db.RecordTab(ctx, l.Fence(), ledger.Tab{RunID: "run_died", TargetID: orphan.ID().Raw(),
		URL: browser.LooseURL(w.base), BindingHash: "b"})
	require.NoError(t, err)
	orphan.Release()
	w.b.Disown(orphan.ID()) // the runner's own connection adopts it
	time.Sleep(5 * time.Millisecond)
	return rec, orphan.ID()
}

// factsOf returns tab record id, its facts, and what they prove.
func factsOf(t *testing.T, w *world, id int64) (ledger.Tab, []ledger.TabFact, ledger.TabState) {
	ctx := context.Background()
	rec, err := w.db.GetTab(ctx, id)
	require.NoError(t, err)
	facts, err := w.db.TabFacts(ctx, id)
	require.NoError(t, err)
	proven, _ := ledger.CloseProof(rec, facts)
	return rec, facts, proven
}

var (
	listedBoth = ledger.Sight{Taken: true, Complete: true, Listed: true}
	absentBoth = ledger.Sight{Taken: true, Complete: true}
)

// A pass closes an earlier pass's tab and records each fact of the proof
// as it observes it: both surfaces' inventories before (complete, listing
// it), the receipt, both after (complete, without it). A record whose tab
// both complete inventories lack is missing, on that fact.
func TestPassRecordsCloseFacts(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ownConnections(t, w)
	ctx := context.Background()
	left, _ := leftByDeadPass(t, w)
	l, err := w.db.AcquireLease(ctx, "browser-operator", "died again", time.Millisecond)
	require.NoError(t, err)
	gone, err := w.db.RecordTab(ctx, l.Fence(), ledger.Tab{RunID: "run_died", TargetID: "0123456789ABCDEF0123456789ABCDEF",
		URL: browser.LooseURL(w.base), BindingHash: "b"})
	require.NoError(t, err)
	time.Sleep(5 * time.Millisecond)

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	rec, facts, proven := factsOf(t, w, left.ID)
	require.Equal(t, ledger.TabClosedVerified, rec.State)
	require.Equal(t, ledger.TabClosedVerified, proven)
	require.Len(t, facts, 3, "%+v", facts)
	require.Equal(t, []ledger.TabFactKind{ledger.FactInventoryReconciled, ledger.FactCloseReceipt, ledger.FactPostCloseAbsent},
		[]ledger.TabFactKind{facts[0].Kind, facts[1].Kind, facts[2].Kind})
	require.Equal(t, [2]ledger.Sight{listedBoth, listedBoth}, [2]ledger.Sight{facts[0].Controller, facts[0].Person})
	require.True(t, facts[1].Sent && facts[1].Confirmed && !facts[1].Gone, "%+v", facts[1])
	require.Equal(t, [2]ledger.Sight{absentBoth, absentBoth}, [2]ledger.Sight{facts[2].Controller, facts[2].Person})
	for _, f := range facts {
		require.Equal(t, rec.Epoch, f.Epoch)
	}

	rec, facts, proven = factsOf(t, w, gone.ID)
	require.Equal(t, ledger.TabMissing, rec.State)
	require.Equal(t, ledger.TabMissing, proven)
	require.Len(t, facts, 1)
	require.Equal(t, ledger.FactInventoryReconciled, facts[0].Kind)
	require.Equal(t, [2]ledger.Sight{absentBoth, absentBoth}, [2]ledger.Sight{facts[0].Controller, facts[0].Person})

	// Past the retention period, a pass prunes the record proven closed,
	// facts and raw target id with it; the missing one is kept.
	w.pass()
	_, err = w.db.GetTab(ctx, left.ID)
	require.NoError(t, err, "kept within the retention period")
	w.getRunner().SetClock(func() time.Time { return time.Now().Add(ledger.DefaultTabRetention + time.Hour) })
	w.pass()
	_, err = w.db.GetTab(ctx, left.ID)
	require.ErrorIs(t, err, ledger.ErrNotFound, "pruned")
	facts, err = w.db.TabFacts(ctx, left.ID)
	require.NoError(t, err)
	require.Empty(t, facts)
	_, err = w.db.GetTab(ctx, gone.ID)
	require.NoError(t, err, "a record not proven closed is never pruned")
}

// The connection ends right after the close receipt: the inventories
// after are incomplete, so the operator records closure_unverified, not
// closed_verified, though the tab is in fact closed. The next pass, on a
// new connection, finds it absent from both complete inventories: that
// is the post-close absence the proof lacked, in the same epoch, and the
// record becomes closed_verified.
func TestPassCloseUnverifiedWhenInventoryIncompleteAfter(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	last := ownConnections(t, w)
	ctx := context.Background()
	left, id := leftByDeadPass(t, w)
	cut := false
	operator.OnTabClose(w.getRunner(), func(point string) {
		if point == "after" && !cut {
			cut = true
			last().Disconnect()
		}
	})

	sum := w.pass()
	require.True(t, cut, "the connection was cut after the close")
	require.Equal(t, 1, sum.Counts["tabs_closure_unverified"], "%+v", sum.Counts)
	rec, facts, proven := factsOf(t, w, left.ID)
	require.Equal(t, ledger.TabClosureUnverified, rec.State)
	require.Equal(t, ledger.TabClosureUnverified, proven)
	require.Len(t, facts, 3, "%+v", facts)
	require.True(t, facts[1].Sent && facts[1].Confirmed, "the close itself was confirmed: %+v", facts[1])
	require.Equal(t, ledger.FactPostCloseAbsent, facts[2].Kind)
	require.False(t, facts[2].Controller.Complete, "no inventory from a connection that ended")
	require.False(t, facts[2].Person.Complete)
	l, err := w.db.AcquireLease(ctx, "browser-operator", "test", time.Millisecond)
	require.NoError(t, err)
	_, err = w.db.UpdateTab(ctx, l.Fence(), left.ID, ledger.TabChange{State: ledger.TabClosedVerified})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "the ledger refuses what the facts do not prove")
	time.Sleep(5 * time.Millisecond)
	inv, err := w.b.Targets(ctx)
	require.NoError(t, err)
	require.False(t, inv.Has(id), "the tab is closed all the same")

	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	rec, facts, proven = factsOf(t, w, left.ID)
	require.Equal(t, ledger.TabClosedVerified, rec.State)
	require.Equal(t, ledger.TabClosedVerified, proven)
	require.Len(t, facts, 4)
	require.Equal(t, ledger.FactPostCloseAbsent, facts[3].Kind)
	require.Equal(t, [2]ledger.Sight{absentBoth, absentBoth}, [2]ledger.Sight{facts[3].Controller, facts[3].Person})
}

// The person closes the tab between the inventories before the close and
// the close: the browser answers there is no such tab, the inventories
// after do not list it, and the operator records missing (gone before
// browserop closed it), never closed_verified.
func TestPassTabGoneBeforeCloseIsMissing(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ownConnections(t, w)
	ctx := context.Background()
	left, id := leftByDeadPass(t, w)
	closed := false
	operator.OnTabClose(w.getRunner(), func(point string) {
		if point == "before" && !closed {
			closed = true
			require.NoError(t, w.b.Adopt(ctx, id))
			_, err := w.b.CloseTarget(ctx, id) // the person's doing
			require.NoError(t, err)
		}
	})

	sum := w.pass()
	require.True(t, closed)
	require.Equal(t, 1, sum.Counts["tabs_missing"], "%+v", sum.Counts)
	rec, facts, proven := factsOf(t, w, left.ID)
	require.Equal(t, ledger.TabMissing, rec.State)
	require.Equal(t, ledger.TabMissing, proven)
	require.Len(t, facts, 3, "%+v", facts)
	require.True(t, facts[1].Gone && !facts[1].Sent, "%+v", facts[1])
	require.Equal(t, [2]ledger.Sight{absentBoth, absentBoth}, [2]ledger.Sight{facts[2].Controller, facts[2].Person})
}
