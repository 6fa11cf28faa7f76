package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
)

// `tasks show` prints the task's owner, connection and interaction
// generations as the ledger holds them.
func TestTasksShowGenerations(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	task, _, err := db.CreateTask(ctx, "agent:gens", ledger.TaskRequest{Title: "gens", Source: "api",
		Contract: ledger.Contract{Domains: []string{"127.0.0.1"}, Capabilities: []string{"post"}}})
	require.NoError(t, err)
	for range 2 {
		_, err := db.AcquireLease(ctx, "browser-operator", "seed", time.Minute)
		require.NoError(t, err)
	}
	l, err := db.GetLease(ctx, "browser-operator")
	require.NoError(t, err)
	for range 3 {
		_, err = db.NextConnection(ctx, l.Name)
		require.NoError(t, err)
	}
	_, err = db.ClaimTask(ctx, l.Fence(), task.ID, 3)
	require.NoError(t, err)
	for range 4 {
		_, err = db.TakeTurn(ctx, task.ID, 0)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	code, out, errs := c.run("tasks", "show", task.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "generations: owner 2 (the operator that last acted on it), connection 3 (its browser connection), interaction 4 (observe and act turns)")
}

// `tasks show` prints why a not_done action's effect is absent.
func TestTasksShowEffectReason(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	task, _, err := db.CreateTask(ctx, "agent:reason", ledger.TaskRequest{Title: "reason", Source: "api",
		Contract: ledger.Contract{Domains: []string{"127.0.0.1"}, Capabilities: []string{"post"}}})
	require.NoError(t, err)
	l, err := db.AcquireLease(ctx, "browser-operator", "seed", time.Minute)
	require.NoError(t, err)
	a, _, err := db.Reserve(ctx, l.Fence(), ledger.Intent{TaskID: task.ID, Type: "post", Site: "demo", Actor: "alice",
		Payload: []byte(`{"intent":"task:x","text":"hi"}`)})
	require.NoError(t, err)
	_, err = db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Executing, Reason: "performing once"})
	require.NoError(t, err)
	_, err = db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "refused by the site"})
	require.NoError(t, err)
	require.NoError(t, db.Close())

	code, out, errs := c.run("tasks", "show", task.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "not_done (proven_absent)")
}
