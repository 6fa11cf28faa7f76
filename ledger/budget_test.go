package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

func TestBudgets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	l := mustLease(t, db, "op")
	f := l.Fence()
	p := mustPolicy(t, map[string]budgets.FormatLimit{
		budgets.PostText: {Max: 3, Window: 24 * time.Hour},
		budgets.Thread:   {Max: 5, Window: 24 * time.Hour},
	}, map[string]budgets.GroupLimit{
		"original": {Formats: []string{budgets.PostText, budgets.Thread}, Max: 4, Window: 24 * time.Hour},
	})
	execute := func(text, format string) (ledger.Action, error) {
		in := postIntent(text)
		in.Format = format
		a := mustReserve(t, db, f, in)
		return db.Transition(ctx, f, a.ID, ledger.Change{To: ledger.Executing, Reason: "go", Budget: p})
	}
	verify := func(a ledger.Action) {
		_, err := db.Transition(ctx, f, a.ID, ledger.Change{To: ledger.Verified, Result: "http://x/p/" + a.ID, Reason: "seen", Budget: p})
		require.NoError(t, err)
	}

	a1, err := execute("one", budgets.PostText)
	require.NoError(t, err)
	verify(a1)
	a2, err := execute("two", budgets.PostText)
	require.NoError(t, err)
	_, err = db.Transition(ctx, f, a2.ID, ledger.Change{To: ledger.Ambiguous, Reason: "timeout"})
	require.NoError(t, err)
	a3, err := execute("three", budgets.PostText)
	require.NoError(t, err) // executing, in flight

	t.Run("InFlightCounts", func(t *testing.T) {
		err := db.CheckBudget(ctx, p, budgets.PostText)
		require.ErrorIs(t, err, budgets.ErrExhausted, "1 verified + 1 ambiguous + 1 executing fill a limit of 3")
		var ex *budgets.Exhausted
		require.True(t, errors.As(err, &ex))
		require.Equal(t, budgets.PostText, ex.Usage.Limit.Name)
		require.Equal(t, 1, ex.Usage.Used)
		require.Equal(t, 2, ex.Usage.InFlight)

		_, err = execute("four", budgets.PostText)
		require.ErrorIs(t, err, budgets.ErrExhausted, "the transition itself refuses")
		got, err := db.ActionByKey(ctx, mustKey(t, withFormat(postIntent("four"), budgets.PostText)))
		require.NoError(t, err)
		require.Equal(t, ledger.Planned, got.Status, "a refused transition leaves it planned")
	})
	t.Run("GroupLimit", func(t *testing.T) {
		th, err := execute("thread one", budgets.Thread)
		require.NoError(t, err, "thread has room, original has 4-3=1")
		verify(th)
		_, err = execute("thread two", budgets.Thread)
		var ex *budgets.Exhausted
		require.True(t, errors.As(err, &ex), "got %v", err)
		require.Equal(t, "original", ex.Usage.Limit.Name)
	})
	t.Run("FailedFreesInFlight", func(t *testing.T) {
		_, err := db.Transition(ctx, f, a3.ID, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "absent"})
		require.NoError(t, err)
		usage, err := db.BudgetUsage(ctx, p)
		require.NoError(t, err)
		require.Equal(t, budgets.Usage{Limit: p.For(budgets.PostText)[0], Used: 1, InFlight: 1}, usage[0])
	})
	t.Run("CommitIdempotent", func(t *testing.T) {
		// Reconciling the ambiguous one commits it once.
		_, err := db.Transition(ctx, f, a2.ID, ledger.Change{To: ledger.Verified, Result: "http://x/p/2", Reason: "found", Budget: p})
		require.NoError(t, err)
		_, err = db.Transition(ctx, f, a2.ID, ledger.Change{To: ledger.Verified, Result: "http://x/p/2", Reason: "again", Budget: p})
		require.ErrorIs(t, err, ledger.ErrIllegalTransition)
		requireUsageEqualsVerified(t, db)
	})
	t.Run("ErrClockBehind", func(t *testing.T) {
		c.Advance(-2 * time.Hour)
		_, err := execute("from the past", budgets.PostText)
		require.ErrorIs(t, err, ledger.ErrClockBehind, "a clock behind recorded effects cannot judge a window")
		c.Advance(2 * time.Hour)
	})
	t.Run("RollingWindow", func(t *testing.T) {
		c.Advance(25 * time.Hour)
		require.NoError(t, db.CheckBudget(ctx, p, budgets.PostText), "usage older than the window no longer counts")
		usage, err := db.BudgetUsage(ctx, p)
		require.NoError(t, err)
		for _, u := range usage {
			require.Zero(t, u.Used, u.Limit.Name)
		}
	})
}

func withFormat(in ledger.Intent, f string) ledger.Intent { in.Format = f; return in }

// requireUsageEqualsVerified checks docs/design.md invariant 5 in the file.
func requireUsageEqualsVerified(t *testing.T, db *ledger.DB) {
	t.Helper()
	verified, err := db.ListActions(context.Background(), ledger.ActionFilter{Statuses: []ledger.Status{ledger.Verified}})
	require.NoError(t, err)
	want := 0
	for _, a := range verified {
		if a.Format != "" {
			want++
		}
	}
	require.Equal(t, want, usageActions(t, db))
}

func usageActions(t *testing.T, db *ledger.DB) int {
	t.Helper()
	p := mustPolicy(t, nil, map[string]budgets.GroupLimit{"all": {Formats: budgets.Formats, Max: 1 << 30, Window: 1 << 62}})
	u, err := db.BudgetUsage(context.Background(), p)
	require.NoError(t, err)
	return u[0].Used
}

// TestBudgetConcurrentNeverPasses races many executing transitions, from
// two connections, against a limit of 3: exactly 3 go through.
func TestBudgetConcurrentNeverPasses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	other := MustOpenAt(t, db.Path(), c)
	l := mustLease(t, db, "op")
	p := mustPolicy(t, map[string]budgets.FormatLimit{budgets.Like: {Max: 3, Window: time.Hour}}, nil)
	var ids []string
	for i := range 12 {
		payload, _ := json.Marshal(map[string]int{"n": i})
		a := mustReserve(t, db, l.Fence(), ledger.Intent{Type: "like", Format: budgets.Like, Actor: "alice",
			TargetURL: fmt.Sprintf("http://x/p/%d", i), Payload: payload})
		ids = append(ids, a.ID)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, exhausted := 0, 0
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := db
			if i%2 == 1 {
				d = other
			}
			a, err := d.Transition(ctx, l.Fence(), id, ledger.Change{To: ledger.Executing, Reason: "go", Budget: p})
			if err == nil {
				_, err = d.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Verified, Result: "u" + id, Reason: "ok", Budget: p})
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, budgets.ErrExhausted):
				exhausted++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 3, ok)
	require.Equal(t, 9, exhausted)
	requireUsageEqualsVerified(t, db)
}

// A moderated effect exists: it counts against a limit from when it was
// made, for as long as the window holds it, and its usage is recorded
// (dated alike) once it is verified. Rejected (a person's failed), it no
// longer counts.
func TestBudgetCountsModerated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	l := mustLease(t, db, "op")
	f := l.Fence()
	p := mustPolicy(t, map[string]budgets.FormatLimit{budgets.PostText: {Max: 1, Window: time.Hour}}, nil)
	held := mustReserve(t, db, f, postIntent("held"))
	_, err := db.Transition(ctx, f, held.ID, ledger.Change{To: ledger.Executing, Reason: "go", Budget: p})
	require.NoError(t, err)
	_, err = db.Transition(ctx, f, held.ID, ledger.Change{To: ledger.Moderated, Reason: "held for moderation"})
	require.NoError(t, err)
	require.ErrorIs(t, db.CheckBudget(ctx, p, budgets.PostText), budgets.ErrExhausted, "the held effect fills the limit")
	u, err := db.BudgetUsage(ctx, p)
	require.NoError(t, err)
	require.Equal(t, 0, u[0].Used)
	require.Equal(t, 1, u[0].InFlight)

	c.Advance(time.Hour + time.Second)
	require.NoError(t, db.CheckBudget(ctx, p, budgets.PostText), "out of the window, as a verified one would be")

	// Verified later: its usage is dated when it was made, out of the window.
	_, err = db.Transition(ctx, f, held.ID, ledger.Change{To: ledger.Verified, Result: "http://x/p/1", Reason: "public", Budget: p})
	require.NoError(t, err)
	u, err = db.BudgetUsage(ctx, p)
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 0}, [2]int{u[0].Used, u[0].InFlight})

	// Another one held, then rejected: it counts, then it does not.
	l2 := mustLease(t, db, "op")
	f = l2.Fence()
	rejected := mustReserve(t, db, f, postIntent("rejected"))
	_, err = db.Transition(ctx, f, rejected.ID, ledger.Change{To: ledger.Executing, Reason: "go", Budget: p})
	require.NoError(t, err)
	_, err = db.Transition(ctx, f, rejected.ID, ledger.Change{To: ledger.Moderated, Reason: "held"})
	require.NoError(t, err)
	require.ErrorIs(t, db.CheckBudget(ctx, p, budgets.PostText), budgets.ErrExhausted)
	_, err = db.Resolve(ctx, rejected.ID, ledger.Change{To: ledger.Failed, Class: ledger.Abandoned, Reason: "rejected by the moderators"})
	require.NoError(t, err)
	require.NoError(t, db.CheckBudget(ctx, p, budgets.PostText))
}
