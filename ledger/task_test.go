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
		task, created, err := db.CreateTask(ctx, "key-ok", taskRequest("post", "reply"))
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
		a, _, err := db.CreateTask(ctx, "key-same", taskRequest("post"))
		require.NoError(t, err)
		req := taskRequest("post")
		req.Input = json.RawMessage(` {"text" : "hi"} `) // same JSON, other spacing
		b, created, err := db.CreateTask(ctx, "key-same", req)
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, a.ID, b.ID)
	})
	t.Run("ErrConflict", func(t *testing.T) {
		a, _, err := db.CreateTask(ctx, "key-conflict", taskRequest("post"))
		require.NoError(t, err)
		_, _, err = db.CreateTask(ctx, "key-conflict", taskRequest("post", "like"))
		require.ErrorIs(t, err, ledger.ErrConflict)
		got, err := db.GetTask(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, []string{"post"}, got.Contract.Capabilities, "the conflict changed nothing")
		all, err := db.ListTasks(ctx, 0)
		require.NoError(t, err)
		n := 0
		for _, task := range all {
			if task.IdempotencyKey == "key-conflict" {
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
			_, _, err := db.CreateTask(ctx, "bad-"+name, ledger.TaskRequest{Contract: c})
			require.ErrorContains(t, err, "contract.", name)
		}
	})
}

func TestGrantsAndStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := MustOpen(t)
	task, _, err := db.CreateTask(ctx, "k", taskRequest("post"))
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
