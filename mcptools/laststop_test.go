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

// task_state shows, on a pending action, the last hard stop that held it
// (kind, reason, run, time; not its cause, which is what the page showed:
// the person's only), within its declared output schema, and nothing once
// the action went ahead.
func TestMCPTaskStateShowsLastStop(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	cs := connectInMemory(t, f.server, nil)
	task, _ := call[tasks.State](t, cs, "task_create", obj{"idempotency_key": "stop", "title": "held", "contract": contract("post")})
	l, err := f.db.AcquireLease(ctx, "operator", "mcp-test", time.Hour)
	require.NoError(t, err)
	payload, _ := json.Marshal(map[string]string{"text": "held by a stop"})
	a, _, err := f.db.Reserve(ctx, l.Fence(), ledger.Intent{TaskID: task.ID, Type: "post", Site: "demo", Actor: "alice",
		TargetURL: "http://127.0.0.1:8787/compose", Payload: payload})
	require.NoError(t, err)
	_, err = f.db.RecordStop(ctx, l.Fence(), a.ID, ledger.Stop{Kind: "login", Cause: "nobody is signed in", RunID: "run_mcp"})
	require.NoError(t, err)

	st, res := call[tasks.State](t, cs, "task_state", obj{"task_id": task.ID})
	require.Len(t, st.Actions, 1)
	stop := st.Actions[0].LastStop
	require.NotNil(t, stop, "%s", text(res))
	require.Equal(t, "login", stop.Kind)
	require.Empty(t, stop.Cause, "a stop's cause is the person's only")
	require.Equal(t, "hard stop: login", stop.Reason)
	require.NotContains(t, text(res), "nobody is signed in")
	require.Equal(t, "run_mcp", stop.RunID)
	require.False(t, stop.At.IsZero())

	_, err = f.db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Executing, Reason: "performing once"})
	require.NoError(t, err)
	st, res = call[tasks.State](t, cs, "task_state", obj{"task_id": task.ID})
	require.Nil(t, st.Actions[0].LastStop)
	require.False(t, strings.Contains(text(res), "last_stop"), "%s", text(res))
}
