package ledger_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

func taskRequest(caps ...string) ledger.TaskRequest {
	return ledger.TaskRequest{Title: "publish", Source: "api",
		Contract: ledger.Contract{Domains: []string{"127.0.0.1"}, Capabilities: caps, MaxSideEffects: 3},
		Input:    json.RawMessage(`{"text":"hi"}`)}
}

func TestCreateTask(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)

	t.Run("OK", func(t *testing.T) {
		task, created, err := db.CreateTask(ctx, "agent:key-ok", taskRequest("post", "reply"))
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, ledger.TaskOpen, task.Status)
		require.Equal(t, []string{"post", "reply"}, task.Contract.Capabilities)
		evs, err := db.TaskEvents(ctx, task.ID)
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, "created", evs[0].Kind)
	})
	t.Run("SameKeySameRequest", func(t *testing.T) {
		a, _, err := db.CreateTask(ctx, "agent:key-same", taskRequest("post"))
		require.NoError(t, err)
		req := taskRequest("post")
		req.Input = json.RawMessage(` {"text" : "hi"} `) // same JSON, other spacing
		b, created, err := db.CreateTask(ctx, "agent:key-same", req)
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, a.ID, b.ID)
	})
	t.Run("ErrConflict", func(t *testing.T) {
		a, _, err := db.CreateTask(ctx, "agent:key-conflict", taskRequest("post"))
		require.NoError(t, err)
		_, _, err = db.CreateTask(ctx, "agent:key-conflict", taskRequest("post", "like"))
		require.ErrorIs(t, err, ledger.ErrConflict)
		got, err := db.GetTask(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, []string{"post"}, got.Contract.Capabilities, "the conflict changed nothing")
		all, err := db.ListTasks(ctx, 0)
		require.NoError(t, err)
		n := 0
		for _, task := range all {
			if task.IdempotencyKey == "agent:key-conflict" {
				n++
			}
		}
		require.Equal(t, 1, n)
	})
	t.Run("KeyRequired", func(t *testing.T) {
		_, _, err := db.CreateTask(ctx, " ", taskRequest("post"))
		require.ErrorContains(t, err, "idempotency key is required")
	})
	t.Run("BadContract", func(t *testing.T) {
		for name, c := range map[string]ledger.Contract{
			"no domains":      {Capabilities: []string{"post"}},
			"upper domain":    {Domains: []string{"Example.com"}, Capabilities: []string{"post"}},
			"unknown cap":     {Domains: []string{"x.test"}, Capabilities: []string{"delete"}},
			"confirm not cap": {Domains: []string{"x.test"}, Capabilities: []string{"post"}, Confirm: []string{"like"}},
			"negative bound":  {Domains: []string{"x.test"}, Capabilities: []string{"post"}, MaxSideEffects: -1},
		} {
			_, _, err := db.CreateTask(ctx, "agent:bad-"+name, ledger.TaskRequest{Contract: c})
			require.ErrorContains(t, err, "contract.", name)
		}
	})
}

func TestGrantsAndStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	task, _, err := db.CreateTask(ctx, "agent:k", taskRequest("post"))
	require.NoError(t, err)
	require.NoError(t, db.AddGrant(ctx, task.ID, "media.example", "person"))
	require.NoError(t, db.AddGrant(ctx, task.ID, "media.example", "person"), "granting twice is safe")
	got, err := db.GetTask(ctx, task.ID)
	require.NoError(t, err)
	require.Len(t, got.Grants, 1)
	require.Equal(t, "media.example", got.Grants[0].Domain)
	require.Equal(t, task.Contract, got.Contract, "a grant never changes the contract")
	require.ErrorIs(t, db.AddGrant(ctx, "task_nope", "x.test", "person"), ledger.ErrNotFound)

	require.NoError(t, db.SetTaskStatus(ctx, task.ID, ledger.TaskCancelled, nil, "stopped by the person"))
	require.ErrorIs(t, db.SetTaskStatus(ctx, task.ID, ledger.TaskDone, nil, "x"), ledger.ErrIllegalTransition)
	evs, err := db.TaskEvents(ctx, task.ID)
	require.NoError(t, err)
	kinds := []string{}
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	require.Equal(t, []string{"created", "grant", "cancelled"}, kinds)
}

// A task key names its maker's namespace; a key without one is refused.
func TestTaskKeyNamespaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	for _, key := range []string{"squatme", "calendar:", "Agent:x", "api:x"} {
		_, _, err := db.CreateTask(ctx, key, taskRequest("post"))
		require.ErrorContains(t, err, "must start with one of", key)
	}
	a, _, err := db.CreateTask(ctx, "agent:calendar:x", taskRequest("post"))
	require.NoError(t, err)
	b, created, err := db.CreateTask(ctx, "calendar:x", taskRequest("post", "like"))
	require.NoError(t, err)
	require.True(t, created)
	require.NotEqual(t, a.ID, b.ID)
}

// A finished task takes no more intents; finishing twice is safe.
func TestFinishTask(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	task, _, err := db.CreateTask(ctx, "agent:fin", taskRequest("post"))
	require.NoError(t, err)
	_, _, err = db.AddTaskIntent(ctx, task.ID, map[string]string{"text": "a"}, 1)
	require.NoError(t, err)
	require.NoError(t, db.FinishTask(ctx, task.ID, "finished by the agent"))
	require.NoError(t, db.FinishTask(ctx, task.ID, "again"))
	got, err := db.GetTask(ctx, task.ID)
	require.NoError(t, err)
	require.False(t, got.FinishedAt.IsZero())
	require.Equal(t, ledger.TaskOpen, got.Status, "open until its intents are settled")
	_, created, err := db.AddTaskIntent(ctx, task.ID, map[string]string{"text": "a"}, 1)
	require.NoError(t, err, "the same intent again is the one already accepted")
	require.False(t, created)
	_, _, err = db.AddTaskIntent(ctx, task.ID, map[string]string{"text": "b"}, 1)
	require.ErrorIs(t, err, ledger.ErrIllegalTransition)
	require.NoError(t, db.SetTaskStatus(ctx, task.ID, ledger.TaskDone, json.RawMessage(`{"intents":[]}`), "settled"))
	require.ErrorIs(t, db.FinishTask(ctx, task.ID, "late"), ledger.ErrIllegalTransition)
}

// Accepting an intent checks the bound in its own transaction; a thread
// counts one effect per part, and the same intent again is not counted.
func TestAddTaskIntentBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	req := taskRequest("post", "thread")
	req.Contract.MaxSideEffects = 3
	task, _, err := db.CreateTask(ctx, "agent:b", req)
	require.NoError(t, err)
	_, _, err = db.AddTaskIntent(ctx, task.ID, map[string]any{"type": "thread", "parts": []string{"1", "2"}}, 2)
	require.NoError(t, err)
	_, _, err = db.AddTaskIntent(ctx, task.ID, map[string]any{"type": "thread", "parts": []string{"x", "y"}}, 2)
	require.ErrorIs(t, err, ledger.ErrSideEffectBound)
	_, created, err := db.AddTaskIntent(ctx, task.ID, map[string]any{"type": "thread", "parts": []string{"1", "2"}}, 2)
	require.NoError(t, err)
	require.False(t, created)
	_, _, err = db.AddTaskIntent(ctx, task.ID, map[string]any{"type": "post", "text": "one more"}, 1)
	require.NoError(t, err)
	intents, err := db.TaskIntents(ctx, task.ID)
	require.NoError(t, err)
	require.Len(t, intents, 2)
	require.Equal(t, 2, intents[0].Effects)
}
