package ledger_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// A handed-off action's confirmation records its handoff once, with the
// pending request; the answer is still given once, and the reason a pass
// holds the answered action may change.
func TestHandoffConfirmation(t *testing.T) {
	db, clk := MustOpen(t)
	ctx := context.Background()
	l := mustLease(t, db, "op")
	f := l.Fence()
	a := mustReserve(t, db, f, postIntent("handed over"))
	tab, err := db.RecordTab(ctx, f, ledger.Tab{RunID: "run_1", TargetID: "RAW-1", URL: "http://127.0.0.1/", BindingHash: "bh"})
	require.NoError(t, err)
	began := clk.Now()
	clk.Advance(time.Second)

	_, err = db.RequestHandoffConfirmation(ctx, f, a.ID, ledger.Handoff{PageURL: "http://127.0.0.1/compose", At: began})
	require.Error(t, err, "a handoff names its tab")
	h := ledger.Handoff{TabID: tab.ID, PageURL: "http://127.0.0.1/compose", At: began, Baseline: []string{"http://127.0.0.1/p/1"}, HaveBaseline: true}
	c, err := db.RequestHandoffConfirmation(ctx, f, a.ID, h)
	require.NoError(t, err)
	require.Equal(t, ledger.ConfirmPending, c.State)
	require.Equal(t, &h, c.Handoff)
	later := h
	later.At, later.Baseline = clk.Now(), nil
	c, err = db.RequestHandoffConfirmation(ctx, f, a.ID, later)
	require.NoError(t, err)
	require.Equal(t, &h, c.Handoff, "asking twice keeps the first handoff")

	_, err = db.HoldConfirmation(ctx, f, a.ID, "the tab is elsewhere")
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "a pending confirmation is the person's")
	_, err = db.BeginHandedOff(ctx, f, a.ID, ledger.Change{To: ledger.Executing, Reason: "r"})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "not before the answer")

	_, err = db.AnswerConfirmation(ctx, a.ID, ledger.ConfirmConfirmed, "person", "")
	require.NoError(t, err)
	c, err = db.HoldConfirmation(ctx, f, a.ID, "the tab is elsewhere")
	require.NoError(t, err)
	require.Equal(t, "the tab is elsewhere", c.Held)
	require.Equal(t, ledger.ConfirmConfirmed, c.State)
	_, err = db.AnswerConfirmation(ctx, a.ID, ledger.ConfirmDeclined, "person", "")
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "answered once")
	c, err = db.HoldConfirmation(ctx, f, a.ID, "")
	require.NoError(t, err)
	require.Empty(t, c.Held)
	require.Equal(t, &h, c.Handoff)

	// The schema refuses to change what the handoff recorded, and a
	// second answer.
	require.NoError(t, db.Close())
	raw, err := sql.Open("sqlite3", "file:"+db.Path())
	require.NoError(t, err)
	defer raw.Close()
	for _, q := range []string{
		`UPDATE confirmations SET handoff_at = 1 WHERE action_id = '` + a.ID + `'`,
		`UPDATE confirmations SET handoff_baseline_json = NULL WHERE action_id = '` + a.ID + `'`,
		`UPDATE confirmations SET handoff_tab_id = NULL WHERE action_id = '` + a.ID + `'`,
		`UPDATE confirmations SET state = 'declined' WHERE action_id = '` + a.ID + `'`,
	} {
		_, err := raw.Exec(q)
		require.ErrorContains(t, err, "browserop:", q)
	}
}

// An effect the person may have made from the handed-off tab dates from
// when the handoff began: the action goes executing with that time (its
// budget usage too), after the same budget check as any other.
func TestBeginHandedOff(t *testing.T) {
	db, clk := MustOpen(t)
	ctx := context.Background()
	l := mustLease(t, db, "op")
	f := l.Fence()
	policy := mustPolicy(t, map[string]budgets.FormatLimit{budgets.PostText: {Max: 1, Window: time.Hour}}, nil)

	plain := mustReserve(t, db, f, postIntent("never handed over"))
	_, err := db.RequestConfirmation(ctx, f, plain.ID)
	require.NoError(t, err)
	_, err = db.AnswerConfirmation(ctx, plain.ID, ledger.ConfirmConfirmed, "person", "")
	require.NoError(t, err)
	_, err = db.BeginHandedOff(ctx, f, plain.ID, ledger.Change{To: ledger.Executing, Reason: "r", Budget: policy})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "no handoff recorded")

	a := mustReserve(t, db, f, postIntent("handed over"))
	tab, err := db.RecordTab(ctx, f, ledger.Tab{RunID: "run_1", TargetID: "RAW-1", URL: "http://127.0.0.1/", BindingHash: "bh"})
	require.NoError(t, err)
	began := clk.Now()
	_, err = db.RequestHandoffConfirmation(ctx, f, a.ID, ledger.Handoff{TabID: tab.ID, At: began})
	require.NoError(t, err)
	_, err = db.AnswerConfirmation(ctx, a.ID, ledger.ConfirmDeclined, "person", "no")
	require.NoError(t, err)
	clk.Advance(10 * time.Minute)
	_, err = db.BeginHandedOff(ctx, f, a.ID, ledger.Change{To: ledger.Verified, Reason: "r", Result: "x"})
	require.ErrorIs(t, err, ledger.ErrIllegalTransition, "only to executing")

	got, err := db.BeginHandedOff(ctx, f, a.ID, ledger.Change{To: ledger.Executing, Reason: "the person may have published it",
		Budget: policy, Baseline: []string{}, HaveBaseline: true})
	require.NoError(t, err)
	require.Equal(t, ledger.Executing, got.Status)
	require.True(t, got.ExecutingAt.Equal(began), "dated from the handoff: %s", got.ExecutingAt)
	require.True(t, got.HaveBaseline)
	stored, err := db.GetAction(ctx, a.ID)
	require.NoError(t, err)
	require.True(t, stored.ExecutingAt.Equal(began))

	// The budget counts it in flight: nothing else fits.
	other := mustReserve(t, db, f, postIntent("another"))
	_, err = db.Transition(ctx, f, other.ID, ledger.Change{To: ledger.Executing, Reason: "r", Budget: policy})
	require.ErrorIs(t, err, budgets.ErrExhausted)
	_, err = db.Transition(ctx, f, a.ID, ledger.Change{To: ledger.Verified, Reason: "verified", Result: "http://127.0.0.1/p/2", Budget: policy})
	require.NoError(t, err)
	u, err := db.BudgetUsage(ctx, policy)
	require.NoError(t, err)
	require.Equal(t, 1, u[0].Used)
}
