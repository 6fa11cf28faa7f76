package ledger_test

import (
	"context"
	"testing"

	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

func TestTabs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	l := mustLease(t, db, "op")
	f := l.Fence()

	tab, err := db.RecordTab(ctx, f, ledger.Tab{TaskID: "task_1", RunID: "run_1", TargetID: "RAW-TARGET", URL: "http://127.0.0.1/compose", BindingHash: "bh"})
	require.NoError(t, err)
	require.Equal(t, ledger.TabLive, tab.State)
	require.Equal(t, 1, tab.Epoch)
	require.Equal(t, ledger.Owned, tab.Ownership)

	_, err = db.UpdateTab(ctx, f, tab.ID, ledger.TabChange{TargetID: "OTHER"})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "a new target without a new epoch")
	missing, err := db.UpdateTab(ctx, f, tab.ID, ledger.TabChange{State: ledger.TabMissing})
	require.NoError(t, err)
	require.Equal(t, ledger.TabMissing, missing.State)
	_, err = db.UpdateTab(ctx, f, tab.ID, ledger.TabChange{State: ledger.TabLive, TargetID: "RAW-2"})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "recovery without a new epoch")
	_, err = db.UpdateTab(ctx, f, tab.ID, ledger.TabChange{State: ledger.TabHandoff})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "missing -> handoff")
	recovered, err := db.UpdateTab(ctx, f, tab.ID, ledger.TabChange{State: ledger.TabLive, TargetID: "RAW-2", NewEpoch: true})
	require.NoError(t, err)
	require.Equal(t, 2, recovered.Epoch, "recovery starts a new inspection epoch")
	require.Equal(t, "RAW-2", recovered.TargetID)

	_, err = db.RecordTabFacts(ctx, f, tab.ID, recovered.Epoch, provenClose()...)
	require.NoError(t, err)
	closed, err := db.UpdateTab(ctx, f, tab.ID, ledger.TabChange{State: ledger.TabClosedVerified})
	require.NoError(t, err)
	_, err = db.UpdateTab(ctx, f, tab.ID, ledger.TabChange{State: ledger.TabLive})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "closed_verified is final")
	got, err := db.GetTab(ctx, tab.ID)
	require.NoError(t, err)
	require.Equal(t, closed.State, got.State)

	other, err := db.RecordTab(ctx, f, ledger.Tab{TaskID: "task_2", TargetID: "RAW-3", URL: "http://127.0.0.1/", BindingHash: "b2"})
	require.NoError(t, err)
	live, err := db.ListTabs(ctx, "", ledger.TabLive)
	require.NoError(t, err)
	require.Len(t, live, 1)
	require.Equal(t, other.ID, live[0].ID)
	mine, err := db.ListTabs(ctx, "task_1")
	require.NoError(t, err)
	require.Len(t, mine, 1)
	_, err = db.GetTab(ctx, 999)
	require.ErrorIs(t, err, ledger.ErrNotFound)
	_, err = db.RecordTab(ctx, f, ledger.Tab{URL: "http://x/"})
	require.Error(t, err, "a tab record needs its target, url and binding")
}

func TestRunsAndThreads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	l := mustLease(t, db, "op")
	r, err := db.StartRun(ctx, l)
	require.NoError(t, err)
	require.NoError(t, db.FinishRun(ctx, l.Fence(), r.ID, "ok", map[string]int{"verified": 2}))
	require.ErrorIs(t, db.FinishRun(ctx, l.Fence(), r.ID, "ok", nil), ledger.ErrNotFound, "a run finishes once")
	got, err := db.GetRun(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, "ok", got.Outcome)
	require.JSONEq(t, `{"verified":2}`, string(got.Summary))

	part0 := postIntent("thread part 0")
	part0.Type = kind.ThreadPart
	part0.Thread = &ledger.ThreadRef{ThreadID: "th1", Position: 0}
	a0 := mustReserve(t, db, l.Fence(), part0)
	for _, s := range []ledger.Status{ledger.Executing, ledger.Verified} {
		_, err := db.Transition(ctx, l.Fence(), a0.ID, changeTo(s))
		require.NoError(t, err)
	}
	part1 := postIntent("thread part 1")
	part1.Type = kind.ThreadPart
	part1.Thread = &ledger.ThreadRef{ThreadID: "th1", Position: 1, ExpectedParent: "http://127.0.0.1/p/1"}
	mustReserve(t, db, l.Fence(), part1)
	parts, err := db.ThreadParts(ctx, "th1")
	require.NoError(t, err)
	require.Len(t, parts, 2)
	require.True(t, parts[0].Verified)
	require.Equal(t, "http://127.0.0.1/p/1", parts[0].PublishedURL, "verifying a part records its URL")
	require.False(t, parts[1].Verified)
	require.Equal(t, "http://127.0.0.1/p/1", parts[1].ExpectedParent)

	dup := postIntent("another part 1")
	dup.Type = kind.ThreadPart
	dup.Thread = &ledger.ThreadRef{ThreadID: "th1", Position: 1}
	_, _, err = db.Reserve(ctx, l.Fence(), dup)
	require.ErrorIs(t, err, ledger.ErrConflict, "one action per thread position")
}

func TestStatusReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	p := mustPolicy(t, nil, nil)
	r, err := db.Status(ctx, "browser-operator", p)
	require.NoError(t, err)
	require.Nil(t, r.Lease, "no lease yet")
	l := mustLease(t, db, "op")
	walk(t, db, l.Fence(), "s1", ledger.Executing, ledger.Ambiguous)
	walk(t, db, l.Fence(), "s2", ledger.Executing, ledger.Verified)
	walk(t, db, l.Fence(), "s3")
	r, err = db.Status(ctx, "browser-operator", p)
	require.NoError(t, err)
	require.True(t, r.LeaseHeld)
	require.Equal(t, "op", r.Lease.Holder)
	require.Equal(t, map[ledger.Status]int{ledger.Planned: 1, ledger.Executing: 0, ledger.Verified: 1, ledger.Failed: 0, ledger.Ambiguous: 1, ledger.Moderated: 0}, r.Counts)
	require.Len(t, r.Ambiguous, 1)
}

// A record written before its tab exists: opening, no target; its first
// target needs no new epoch, a reopened tab's does.
func TestTabOpening(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	f := mustLease(t, db, "op").Fence()

	rec, err := db.RecordTab(ctx, f, ledger.Tab{RunID: "run_1", State: ledger.TabOpening, URL: "http://127.0.0.1/", BindingHash: "bh"})
	require.NoError(t, err)
	require.Equal(t, ledger.TabOpening, rec.State)
	require.Empty(t, rec.TargetID)
	_, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabLive})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "live without a target")
	_, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabHandoff})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "opening -> handoff")
	live, err := db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabLive, TargetID: "RAW-1"})
	require.NoError(t, err, "the first target is not a replacement")
	require.Equal(t, 1, live.Epoch)

	// Reopening: missing -> opening keeps the old target until the new one.
	_, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabMissing})
	require.NoError(t, err)
	reopening, err := db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabOpening})
	require.NoError(t, err)
	require.Equal(t, "RAW-1", reopening.TargetID)
	_, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabLive, TargetID: "RAW-2"})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "a reopened tab needs a new epoch")
	reopened, err := db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabLive, TargetID: "RAW-2", NewEpoch: true})
	require.NoError(t, err)
	require.Equal(t, 2, reopened.Epoch)

	// A tab that never came to be: opening -> missing with no target.
	never, err := db.RecordTab(ctx, f, ledger.Tab{RunID: "run_2", State: ledger.TabOpening, URL: "http://127.0.0.1/", BindingHash: "bh2"})
	require.NoError(t, err)
	for _, to := range []ledger.TabState{ledger.TabClosedVerified, ledger.TabClosureUnverified, ledger.TabLive} {
		_, err = db.UpdateTab(ctx, f, never.ID, ledger.TabChange{State: to})
		require.ErrorIs(t, err, ledger.ErrIllegalTransition, "%s without a target", to)
	}
	gone, err := db.UpdateTab(ctx, f, never.ID, ledger.TabChange{State: ledger.TabMissing})
	require.NoError(t, err)
	require.Empty(t, gone.TargetID)
	_, err = db.UpdateTab(ctx, f, never.ID, ledger.TabChange{State: ledger.TabClosureUnverified})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "missing -> closure_unverified without a target")
	_, err = db.RecordTab(ctx, f, ledger.Tab{RunID: "run_3", State: ledger.TabLive, URL: "http://127.0.0.1/", BindingHash: "bh3"})
	require.Error(t, err, "a live record needs its target")
}
