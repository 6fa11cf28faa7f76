package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
)

// TestTabsShow: tabs show RECORD prints a record's close facts, each
// epoch's (an earlier epoch's marked over), and what the current epoch's
// prove, never the raw target id; a bad record number is a usage error
// naming it.
func TestTabsShow(t *testing.T) {
	c := newCLI(t)
	c.seed()
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	l, err := db.AcquireLease(ctx, "browser-operator", "seed", time.Minute)
	require.NoError(t, err)
	f := l.Fence()
	const raw = "RAWTARGET0123456789ABCDEF0123456"
	rec, err := db.RecordTab(ctx, f, ledger.Tab{RunID: "run_1", TargetID: raw, URL: "http://127.0.0.1:8787/", BindingHash: "bh"})
	require.NoError(t, err)
	both := ledger.Sight{Taken: true, Complete: true, Listed: true}
	gone := ledger.Sight{Taken: true, Complete: true}
	_, err = db.RecordTabFacts(ctx, f, rec.ID, 1,
		ledger.TabFact{Kind: ledger.FactInventoryReconciled, Controller: both, Person: both},
		ledger.TabFact{Kind: ledger.FactCloseReceipt, Sent: true, Confirmed: true},
		ledger.TabFact{Kind: ledger.FactPostCloseAbsent, Controller: gone, Person: gone})
	require.NoError(t, err)
	rec, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{TargetID: raw + "X", NewEpoch: true})
	require.NoError(t, err)
	_, err = db.RecordTabFacts(ctx, f, rec.ID, 2,
		ledger.TabFact{Kind: ledger.FactInventoryReconciled, Controller: both, Person: both},
		ledger.TabFact{Kind: ledger.FactCloseReceipt, Sent: true, Confirmed: true},
		ledger.TabFact{Kind: ledger.FactPostCloseAbsent, Controller: gone, Person: ledger.Sight{Taken: true}})
	require.NoError(t, err)
	_, err = db.UpdateTab(ctx, f, rec.ID, ledger.TabChange{State: ledger.TabClosureUnverified})
	require.NoError(t, err)
	require.NoError(t, db.Close())

	code, out, errs := c.run("tabs", "show", "1")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "closure_unverified: the inventory after the close was not complete (controller: complete, without the tab; person: incomplete)")
	require.Regexp(t, `1 \(over\)\s+close_receipt\s+-\s+-\s+sent, destruction confirmed`, out)
	require.Regexp(t, `2\s+post_close_absent\s+complete, without the tab\s+incomplete\s+-`, out)
	require.Regexp(t, `2\s+inventory_reconciled\s+complete, listed the tab\s+complete, listed the tab`, out)
	require.NotContains(t, out, "RAWTARGET", "the raw target id stays in the ledger")

	code, out, errs = c.run("tabs", "show", "1", "--json")
	require.Equal(t, 0, code, errs)
	require.NotContains(t, out, "RAWTARGET")
	var got tabShowJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Equal(t, ledger.TabClosureUnverified, got.Proven)
	require.Equal(t, 2, got.Epoch)
	require.Len(t, got.Facts, 6)
	require.False(t, got.Facts[0].Current)
	require.True(t, got.Facts[5].Current)
	require.Equal(t, "incomplete", got.Facts[5].Person)

	code, out, _ = c.run("tabs")
	require.Equal(t, 0, code)
	require.Contains(t, out, "closure_unverified", "tabs still lists the records")

	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"tabs", "show"}, "tabs show needs one tab record number"},
		{[]string{"tabs", "show", "x1"}, `tab record "x1" is not a record number`},
		{[]string{"tabs", "show", "1", "2"}, "got 2 arguments"},
	} {
		code, _, errs := c.run(bad.args...)
		require.Equal(t, 2, code, "%v: %s", bad.args, errs)
		require.Contains(t, errs, bad.says)
	}
	code, _, errs = c.run("tabs", "show", "99")
	require.NotEqual(t, 0, code)
	require.Contains(t, errs, "tab record 99")
}
