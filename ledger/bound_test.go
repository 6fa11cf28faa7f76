package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// The task's side-effect bound holds again when an action goes executing:
// counting the task's verified, executing and ambiguous actions, however
// the actions came to be reserved.
func TestExecutingRespectsTaskBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	req := taskRequest("post")
	req.Contract.MaxSideEffects = 2
	task, _, err := db.CreateTask(ctx, "agent:bound", req)
	require.NoError(t, err)
	f := mustLease(t, db, "op").Fence()
	var acts []ledger.Action
	for i := range 3 {
		in := postIntent(fmt.Sprintf("bounded %d", i))
		in.TaskID = task.ID
		acts = append(acts, mustReserve(t, db, f, in))
	}
	_, err = db.Transition(ctx, f, acts[0].ID, ledger.Change{To: ledger.Executing, Reason: "perform"})
	require.NoError(t, err)
	_, err = db.Transition(ctx, f, acts[0].ID, ledger.Change{To: ledger.Ambiguous, Reason: "timed out"})
	require.NoError(t, err)
	_, err = db.Transition(ctx, f, acts[1].ID, ledger.Change{To: ledger.Executing, Reason: "perform"})
	require.NoError(t, err)
	_, err = db.Transition(ctx, f, acts[2].ID, ledger.Change{To: ledger.Executing, Reason: "perform"})
	require.ErrorIs(t, err, ledger.ErrSideEffectBound)
	require.ErrorIs(t, err, budgets.ErrExhausted, "a pass treats it like an exhausted budget: the action waits")
	a, err := db.GetAction(ctx, acts[2].ID)
	require.NoError(t, err)
	require.Equal(t, ledger.Planned, a.Status)

	// A failed action does not count: its effect did not happen.
	_, err = db.Transition(ctx, f, acts[1].ID, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "absent"})
	require.NoError(t, err)
	_, err = db.Transition(ctx, f, acts[2].ID, ledger.Change{To: ledger.Executing, Reason: "perform"})
	require.NoError(t, err)
}
