package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
)

// TestTaskGenerations: the owner generation is the operator's that last
// acted on the task (a claim, or a write of one of its actions, not a
// person's resolution); the connection generation its browser
// connection's; the interaction generation counts turns. A write from an
// older generation of any of the three is refused, naming both, and
// changes nothing.
func TestTaskGenerations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	task, _, err := db.CreateTask(ctx, "agent:gens", taskRequest("post"))
	require.NoError(t, err)
	require.Zero(t, task.OwnerGeneration+task.ConnectionGeneration+task.InteractionGeneration)

	old := mustLease(t, db, "old")
	conn1, err := db.NextConnection(ctx, old.Name)
	require.NoError(t, err)
	got, err := db.ClaimTask(ctx, old.Fence(), task.ID, conn1)
	require.NoError(t, err)
	require.Equal(t, old.Generation, got.OwnerGeneration)
	require.Equal(t, conn1, got.ConnectionGeneration)

	t.Run("ErrOlderConnection", func(t *testing.T) {
		conn2, err := db.NextConnection(ctx, old.Name)
		require.NoError(t, err)
		require.Equal(t, conn1+1, conn2, "one more each time the connection is established again")
		_, err = db.ClaimTask(ctx, old.Fence(), task.ID, conn2)
		require.NoError(t, err)
		_, err = db.ClaimTask(ctx, old.Fence(), task.ID, conn1)
		require.ErrorIs(t, err, ledger.ErrStaleGeneration)
		var stale *ledger.StaleError
		require.True(t, errors.As(err, &stale))
		require.Equal(t, "connection", stale.What)
		require.ErrorContains(t, err, "browser connection 2; connection 1 is older")
		cur, err := db.GetTask(ctx, task.ID)
		require.NoError(t, err)
		require.Equal(t, conn2, cur.ConnectionGeneration, "nothing changed")
	})

	c.Advance(2 * time.Minute) // the old lease expires
	next := mustLease(t, db, "next")
	t.Run("ActionWritesOwn", func(t *testing.T) {
		in := postIntent("owned by the writer")
		in.TaskID = task.ID
		a := mustReserve(t, db, next.Fence(), in)
		cur, err := db.GetTask(ctx, task.ID)
		require.NoError(t, err)
		require.Equal(t, next.Generation, cur.OwnerGeneration, "reserving an action of the task")
		_, err = db.Transition(ctx, next.Fence(), a.ID, ledger.Change{To: ledger.Executing, Reason: "performing once"})
		require.NoError(t, err)
		_, err = db.Transition(ctx, next.Fence(), a.ID, ledger.Change{To: ledger.Ambiguous, Reason: "cannot prove"})
		require.NoError(t, err)
		_, err = db.Resolve(ctx, a.ID, ledger.Change{To: ledger.Failed, Class: ledger.Abandoned, Reason: "absent by a person"})
		require.NoError(t, err)
		cur, err = db.GetTask(ctx, task.ID)
		require.NoError(t, err)
		require.Equal(t, next.Generation, cur.OwnerGeneration, "a person's resolution owns nothing")
	})
	t.Run("ErrOlderOwner", func(t *testing.T) {
		// The old operator's lease is stale: refused by the fence. A
		// fence naming another lease, at an older generation than the
		// task's owner, is refused by the task.
		_, err := db.ClaimTask(ctx, old.Fence(), task.ID, 9)
		require.ErrorIs(t, err, ledger.ErrStaleGeneration)
		other, err := db.AcquireLease(ctx, "other-operator", "x", time.Minute)
		require.NoError(t, err)
		_, err = db.ClaimTask(ctx, other.Fence(), task.ID, 9)
		require.ErrorIs(t, err, ledger.ErrStaleGeneration)
		require.ErrorContains(t, err, "owned by operator generation 2; generation 1 is older")
		cur, err := db.GetTask(ctx, task.ID)
		require.NoError(t, err)
		require.Equal(t, next.Generation, cur.OwnerGeneration, "nothing changed")
	})
	t.Run("Turns", func(t *testing.T) {
		n, err := db.TakeTurn(ctx, task.ID, 0)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		n, err = db.TakeTurn(ctx, task.ID, 1)
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		_, err = db.TakeTurn(ctx, task.ID, 1)
		require.ErrorIs(t, err, ledger.ErrStaleGeneration)
		require.ErrorContains(t, err, "is at interaction generation 2, not 1")
		cur, err := db.GetTask(ctx, task.ID)
		require.NoError(t, err)
		require.Equal(t, int64(2), cur.InteractionGeneration, "nothing changed")
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := db.TakeTurn(ctx, "task_nope", 0)
		require.ErrorIs(t, err, ledger.ErrNotFound)
		_, err = db.ClaimTask(ctx, next.Fence(), "task_nope", 1)
		require.ErrorIs(t, err, ledger.ErrNotFound)
		_, err = db.NextConnection(ctx, "no-such-lease")
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}
