package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
	"pgregory.net/rapid"
)

// TestLedgerProperties drives random sequences of reserve, transitions,
// lease takeovers and budget commits from several simulated operators
// against one ledger file, with a simulated world that decides whether each
// performed action took effect, and checks docs/design.md's invariants 1, 3, 4,
// 5 and 8 at the ledger level after every step.
func TestLedgerProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "ledger-prop-")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		c := newClock()
		db, err := ledger.Open(ctx, filepath.Join(dir, "ledger.db"), ledger.Options{Now: c.Now})
		if err != nil {
			rt.Fatal(err)
		}
		defer db.Close()
		policy, err := budgets.NewPolicy(map[string]budgets.FormatLimit{
			budgets.PostText: {Max: 1, Window: time.Hour},
			budgets.Like:     {Max: 1, Window: time.Hour},
		}, map[string]budgets.GroupLimit{"original": {Formats: []string{budgets.PostText, budgets.Thread}, Max: 2, Window: time.Hour}})
		if err != nil {
			rt.Fatal(err)
		}

		const operators = 3
		leases := make([]ledger.Lease, operators) // what each operator believes it holds
		intents := []ledger.Intent{}
		for i := range 6 {
			format := []string{budgets.PostText, budgets.Like, budgets.Thread}[i%3]
			p, _ := json.Marshal(map[string]any{"text": fmt.Sprintf("intent %d", i)})
			intents = append(intents, ledger.Intent{Type: "post", Format: format, Actor: "alice", Payload: p})
		}
		effects := map[string]int{}           // world: effects per action id
		happened := map[string]bool{}         // world: did the current attempt take effect
		reservedKeys := map[string]struct{}{} // model: intents that were ever reserved

		// pickOp draws an operator: most often the current holder, so
		// that work gets done, sometimes any (often stale) one.
		pickOp := func(rt *rapid.T) int {
			if rapid.IntRange(0, 4).Draw(rt, "stale?") > 0 {
				if cur, err := db.GetLease(ctx, "browser-operator"); err == nil {
					for i, l := range leases {
						if l.Generation == cur.Generation {
							return i
						}
					}
				}
			}
			return rapid.IntRange(0, operators-1).Draw(rt, "op")
		}
		steps := rapid.IntRange(10, 120).Draw(rt, "steps")
		for range steps {
			switch rapid.SampledFrom([]string{"acquire", "time", "heartbeat", "reserve", "reserve", "transition", "transition", "transition", "transition"}).Draw(rt, "step") {
			case "acquire":
				op := rapid.IntRange(0, operators-1).Draw(rt, "op")
				if l, err := db.AcquireLease(ctx, "browser-operator", fmt.Sprintf("op%d", op), time.Minute); err == nil {
					leases[op] = l
				} else if !errors.Is(err, ledger.ErrLocked) {
					rt.Fatal(err)
				}
			case "time":
				c.Advance(time.Duration(rapid.IntRange(1, 90).Draw(rt, "seconds")) * time.Second)
			case "heartbeat":
				op := pickOp(rt)
				if l, err := db.Heartbeat(ctx, leases[op], time.Minute); err == nil {
					leases[op] = l
				} else if !errors.Is(err, ledger.ErrStaleGeneration) {
					rt.Fatal(err)
				}
			case "reserve":
				op := pickOp(rt)
				in := intents[rapid.IntRange(0, len(intents)-1).Draw(rt, "intent")]
				stale := !isCurrent(ctx, db, leases[op])
				_, _, err := db.Reserve(ctx, leases[op].Fence(), in)
				switch {
				case err == nil && stale:
					rt.Fatalf("invariant 4: a stale generation reserved")
				case err == nil:
					reservedKeys[mustKeyR(rt, in)] = struct{}{}
				case !errors.Is(err, ledger.ErrStaleGeneration):
					rt.Fatal(err)
				}
			case "transition":
				op := pickOp(rt)
				all, err := db.ListActions(ctx, ledger.ActionFilter{})
				if err != nil {
					rt.Fatal(err)
				}
				if len(all) == 0 {
					continue
				}
				a := all[rapid.IntRange(0, len(all)-1).Draw(rt, "action")]
				to := rapid.SampledFrom(ledger.Statuses).Draw(rt, "to")
				// Any transition may be asked for, legal or not; verdicts are
				// honest: verified only when the world shows the effect,
				// failed only when it does not (else it stays uncertain).
				ch := ledger.Change{To: to, Reason: "prop", Budget: policy, Result: "http://x/" + a.ID}
				if to == ledger.Failed {
					ch.Class = ledger.Definitive
				}
				if (to == ledger.Verified || to == ledger.Moderated) && !happened[a.ID] || (to == ledger.Failed && happened[a.ID]) {
					ch.To = ledger.Ambiguous
				}
				before, _ := db.GetAction(ctx, a.ID)
				stale := !isCurrent(ctx, db, leases[op])
				got, err := db.Transition(ctx, leases[op].Fence(), a.ID, ch)
				after, _ := db.GetAction(ctx, a.ID)
				if stale && err == nil {
					rt.Fatalf("invariant 4: a stale generation changed %s", a.ID)
				}
				if err != nil {
					if !equalAction(before, after) {
						rt.Fatalf("invariant 4/lifecycle: a refused transition changed %s", a.ID)
					}
					continue
				}
				if got.Status == ledger.Executing {
					// perform_once: the world may or may not take the effect.
					happened[a.ID] = rapid.Bool().Draw(rt, "effect")
					if happened[a.ID] {
						effects[a.ID]++
					}
				}
			}
		}
		checkInvariants(rt, ctx, db, effects, reservedKeys, policy, c.Now())
	})
}

func equalAction(a, b ledger.Action) bool {
	return a.Status == b.Status && a.Attempt == b.Attempt && a.CanonicalResult == b.CanonicalResult &&
		a.Generation == b.Generation && a.UpdatedAt.Equal(b.UpdatedAt)
}

func isCurrent(ctx context.Context, db *ledger.DB, l ledger.Lease) bool {
	cur, err := db.GetLease(ctx, "browser-operator")
	return err == nil && l.Generation == cur.Generation && l.Generation > 0
}

func mustKeyR(rt *rapid.T, in ledger.Intent) string {
	k, err := in.Key()
	if err != nil {
		rt.Fatal(err)
	}
	return k
}

func checkInvariants(rt *rapid.T, ctx context.Context, db *ledger.DB, effects map[string]int, reserved map[string]struct{}, p budgets.Policy, now time.Time) {
	all, err := db.ListActions(ctx, ledger.ActionFilter{})
	if err != nil {
		rt.Fatal(err)
	}
	// Invariant 8: every reserved intent is still there, in a known status.
	if len(all) != len(reserved) {
		rt.Fatalf("invariant 8: %d intents reserved, %d actions recorded", len(reserved), len(all))
	}
	verifiedWithFormat := 0
	for _, a := range all {
		if !a.Status.Valid() {
			rt.Fatalf("invariant 8: %s has status %q", a.ID, a.Status)
		}
		// Invariant 1: at most one external effect per intent.
		if effects[a.ID] > 1 {
			rt.Fatalf("invariant 1: %s took effect %d times", a.ID, effects[a.ID])
		}
		if a.Status == ledger.Verified && a.Format != "" {
			verifiedWithFormat++
		}
		evs, err := db.Events(ctx, a.ID)
		if err != nil {
			rt.Fatal(err)
		}
		// Invariant 3: after ambiguous, no executing without a failed in between.
		sawAmbiguous := false
		var lastGen, execGen int64
		for _, e := range evs {
			switch e.To {
			case ledger.Ambiguous:
				sawAmbiguous = true
				execGen = 0
			case ledger.Failed, ledger.Verified:
				// An action left executing by one generation is settled by
				// another only through ambiguous (reconciliation).
				if e.From == ledger.Executing && e.Generation != execGen {
					rt.Fatalf("invariant 3: %s executing under generation %d was settled by generation %d", a.ID, execGen, e.Generation)
				}
				if e.To == ledger.Failed {
					sawAmbiguous = false
				}
			case ledger.Executing:
				if sawAmbiguous {
					rt.Fatalf("invariant 3: %s performed again after ambiguous", a.ID)
				}
				execGen = e.Generation
			}
			// Invariant 4: writes only ever come from the newest generation,
			// so generations along one action never go back.
			if e.Generation < lastGen {
				rt.Fatalf("invariant 4: %s has an event of generation %d after %d", a.ID, e.Generation, lastGen)
			}
			lastGen = e.Generation
		}
	}
	// Invariant 5: budget consumed equals verified actions, within limits.
	usage, err := db.BudgetUsage(ctx, p)
	if err != nil {
		rt.Fatal(err)
	}
	for _, u := range usage {
		if u.Used+u.InFlight > u.Limit.Max {
			rt.Fatalf("invariant 5: %s used %d + in flight %d > %d", u.Limit.Name, u.Used, u.InFlight, u.Limit.Max)
		}
	}
	all2, err := budgets.NewPolicy(nil, map[string]budgets.GroupLimit{"all": {Formats: budgets.Formats, Max: 1 << 30, Window: 1 << 62}})
	if err != nil {
		rt.Fatal(err)
	}
	u, err := db.BudgetUsage(ctx, all2)
	if err != nil {
		rt.Fatal(err)
	}
	if u[0].Used != verifiedWithFormat {
		rt.Fatalf("invariant 5: %d usage records for %d verified actions", u[0].Used, verifiedWithFormat)
	}
	_ = now // windows are checked against the ledger's own clock
}
