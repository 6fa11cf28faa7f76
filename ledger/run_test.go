package ledger_test

import (
	"context"
	"encoding/json"
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
