package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// task_state shows the task's owner, connection and interaction
// generations; task_observe and task_submit each take a turn; a
// submission fenced by an interaction generation another turn has passed
// is refused with stale_generation and submits nothing.
func TestMCPGenerations(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	cs := connectInMemory(t, f.server, nil)
	task, _ := call[tasks.State](t, cs, "task_create", obj{"idempotency_key": "gens", "contract": contract("post")})
	require.Zero(t, task.OwnerGeneration+task.ConnectionGeneration+task.InteractionGeneration)

	l, err := f.db.AcquireLease(ctx, "operator", "mcp-test", time.Hour)
	require.NoError(t, err)
	conn, err := f.db.NextConnection(ctx, l.Name)
	require.NoError(t, err)
	_, err = f.db.ClaimTask(ctx, l.Fence(), task.ID, conn)
	require.NoError(t, err)
	st, res := call[tasks.State](t, cs, "task_state", obj{"task_id": task.ID})
	require.Equal(t, l.Generation, st.OwnerGeneration)
	require.Equal(t, conn, st.ConnectionGeneration)
	require.Contains(t, text(res), `"connection_generation":1`)
	require.Zero(t, st.InteractionGeneration, "reading the state is no turn")

	o, _ := call[tasks.Observation](t, cs, "task_observe", obj{"task_id": task.ID})
	require.Equal(t, int64(1), o.InteractionGeneration)
	post := obj{"site": "demo", "actor": "@alice", "type": "post", "text": "fenced by a turn"}
	st, _ = call[tasks.State](t, cs, "task_submit", obj{"task_id": task.ID, "intent": post, "interaction_generation": 1})
	require.Equal(t, int64(2), st.InteractionGeneration)
	require.Equal(t, 1, st.Intents)

	other := obj{"site": "demo", "actor": "@alice", "type": "post", "text": "from an older turn"}
	msg := callErr(t, cs, "task_submit", obj{"task_id": task.ID, "intent": other, "interaction_generation": 1})
	require.True(t, strings.HasPrefix(msg, "stale_generation: "), msg)
	require.Contains(t, msg, "is at interaction generation 2, not 1")
	st, _ = call[tasks.State](t, cs, "task_state", obj{"task_id": task.ID})
	require.Equal(t, 1, st.Intents, "nothing submitted")
	require.Equal(t, int64(2), st.InteractionGeneration)

	msg = callErr(t, cs, "task_submit", obj{"task_id": task.ID, "intent": other, "interaction_generation": 0})
	require.True(t, strings.HasPrefix(msg, "usage: "), msg)

	// A write of one of the task's actions under a newer lease owns it.
	l2, err := f.db.AcquireLease(ctx, "operator", "mcp-test", time.Hour)
	require.NoError(t, err)
	payload, _ := json.Marshal(map[string]string{"text": "owned"})
	_, _, err = f.db.Reserve(ctx, l2.Fence(), ledger.Intent{TaskID: task.ID, Type: "post", Site: "demo", Actor: "alice",
		TargetURL: "http://127.0.0.1:8787/compose", Payload: payload})
	require.NoError(t, err)
	st, _ = call[tasks.State](t, cs, "task_state", obj{"task_id": task.ID})
	require.Equal(t, l2.Generation, st.OwnerGeneration)
}
