package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// A stop's cause comes from a page: `actions show` and `actions list`
// print the stop that held a planned action with its control characters
// escaped, whatever the ledger holds.
func TestLastStopIsEscaped(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	l, err := db.AcquireLease(ctx, "browser-operator", "seed", time.Minute)
	require.NoError(t, err)
	a, _, err := db.Reserve(ctx, l.Fence(), ledger.Intent{Type: "post", Site: "demo", Actor: "alice",
		Payload: []byte(`{"intent":"calendar:held","text":"hi"}`)})
	require.NoError(t, err)
	_, err = db.RecordStop(ctx, l.Fence(), a.ID, ledger.Stop{Kind: "login", Cause: "signed in as " + hostile, RunID: "run_seed"})
	require.NoError(t, err)
	require.NoError(t, db.ReleaseLease(ctx, l))
	require.NoError(t, db.Close())

	for _, args := range [][]string{{"actions", "list"}, {"actions", "show", a.ID}} {
		code, out, errs := c.run(args...)
		require.Equal(t, 0, code, "%v: %s", args, errs)
		require.Contains(t, out, "hard stop: login (signed in as evil", "%v prints the stop", args)
		if r, ok := rawControl(out); ok {
			t.Fatalf("browserop %s prints a raw %U:\n%q", strings.Join(args, " "), r, out)
		}
		require.Contains(t, out, `\x1b`, "%v shows the escape, escaped", args)
	}
	code, out, errs := c.run("actions", "show", a.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "; in run run_seed at ")
}
