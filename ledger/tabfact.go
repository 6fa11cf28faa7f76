package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// TabFactKind names one of the facts a tab's close is proven by.
type TabFactKind string

// The facts of a close proof, each recorded when the operator observes it.
const (
	// FactInventoryReconciled: the inventories taken before the close.
	FactInventoryReconciled TabFactKind = "inventory_reconciled"
	// FactCloseReceipt: what closing the tab observed.
	FactCloseReceipt TabFactKind = "close_receipt"
	// FactPostCloseAbsent: the inventories taken after the close, whether
	// or not they prove the tab absent.
	FactPostCloseAbsent TabFactKind = "post_close_absent"
)

// Sight is what one surface's inventory said of a tab: whether the
// inventory was taken, whether the layer that produced it said it is
// complete, and whether it listed the tab.
type Sight struct {
	Taken    bool
	Complete bool
	Listed   bool
}

func (s Sight) String() string {
	switch {
	case !s.Taken:
		return "not taken"
	case !s.Complete && s.Listed:
		return "incomplete, listed the tab"
	case !s.Complete:
		return "incomplete"
	case s.Listed:
		return "complete, listed the tab"
	}
	return "complete, without the tab"
}

// TabFact is one fact about a tab record in one inspection epoch. An
// inventory fact (FactInventoryReconciled, FactPostCloseAbsent) says what
// each surface's inventory showed: Controller, the browser's page targets
// over DevTools; Person, the tabs in the person's windows. A receipt
// (FactCloseReceipt) says whether the close command was Sent, the tab's
// destruction Confirmed, or the tab was already Gone when it was closed.
type TabFact struct {
	Seq        int64 // the order facts were recorded in
	TabID      int64
	Epoch      int
	Kind       TabFactKind
	Controller Sight
	Person     Sight
	Sent       bool
	Confirmed  bool
	Gone       bool
	Generation int64
	At         time.Time
}

// unionComplete reports whether both surfaces' inventories were taken and
// complete: only then does the fact speak for the tab's presence or
// absence.
func (f TabFact) unionComplete() bool {
	return f.Controller.Taken && f.Controller.Complete && f.Person.Taken && f.Person.Complete
}

func (f TabFact) listed() bool { return f.Controller.Listed || f.Person.Listed }

// absent reports whether the fact proves the tab absent: the complete
// union of both surfaces does not list it.
func (f TabFact) absent() bool { return f.unionComplete() && !f.listed() }

func (f TabFact) check() error {
	switch f.Kind {
	case FactCloseReceipt:
		if f.Controller != (Sight{}) || f.Person != (Sight{}) {
			return errors.New("a close receipt carries no inventory")
		}
	case FactInventoryReconciled, FactPostCloseAbsent:
		if f.Sent || f.Confirmed || f.Gone {
			return fmt.Errorf("an inventory fact (%s) carries no receipt", f.Kind)
		}
		if !f.Controller.Taken && !f.Person.Taken {
			return fmt.Errorf("an inventory fact (%s) needs an inventory taken", f.Kind)
		}
		for _, s := range []Sight{f.Controller, f.Person} {
			if !s.Taken && (s.Complete || s.Listed) {
				return errors.New("an inventory not taken is neither complete nor listing")
			}
		}
	default:
		return fmt.Errorf("unknown tab fact %q (want %s, %s or %s)", f.Kind, FactInventoryReconciled, FactCloseReceipt, FactPostCloseAbsent)
	}
	return nil
}

// CloseProof derives what the facts prove about closing the tab of record
// t, from the facts of t's current epoch only (an earlier epoch's never
// count), and says why. It is the one place closed_verified comes from:
//
//   - closed_verified: the last close receipt was sent and confirmed, the
//     last inventory before it was complete on both surfaces and listed
//     the tab, and the last one after it is complete on both surfaces and
//     lists it on neither;
//   - missing: the tab was already gone when it was closed, and an
//     inventory after proves it absent; or, with no close, the last
//     inventory proves it absent;
//   - closure_unverified: a close was made and the rest is not proven;
//   - "": no close and no proof of absence.
func CloseProof(t Tab, facts []TabFact) (TabState, string) {
	var cur []TabFact
	for _, f := range facts {
		if f.TabID == t.ID && f.Epoch == t.Epoch {
			cur = append(cur, f)
		}
	}
	slices.SortFunc(cur, func(a, b TabFact) int { return int(a.Seq - b.Seq) })
	last := func(kind TabFactKind, from, to int) *TabFact {
		for i := to - 1; i >= from; i-- {
			if cur[i].Kind == kind {
				return &cur[i]
			}
		}
		return nil
	}
	r := -1
	for i, f := range cur {
		if f.Kind == FactCloseReceipt {
			r = i
		}
	}
	if r < 0 {
		// Inventories only: the last one speaks.
		if len(cur) > 0 && cur[len(cur)-1].absent() {
			return TabMissing, fmt.Sprintf("no close in epoch %d, and the complete controller and person inventories do not list the tab", t.Epoch)
		}
		return "", fmt.Sprintf("no close in epoch %d", t.Epoch)
	}
	rc, before, after := cur[r], last(FactInventoryReconciled, 0, r), last(FactPostCloseAbsent, r+1, len(cur))
	switch {
	case rc.Gone:
		if after != nil && after.absent() {
			return TabMissing, "the tab was gone before it was closed, and the complete controller and person inventories after do not list it"
		}
		return TabClosureUnverified, "the tab was gone before it was closed, but no complete controller and person inventory after proves it absent"
	case !rc.Sent || !rc.Confirmed:
		return TabClosureUnverified, fmt.Sprintf("the close was not confirmed (sent: %t, destroyed: %t)", rc.Sent, rc.Confirmed)
	case before == nil:
		return TabClosureUnverified, "no inventory was reconciled before the close"
	case !before.unionComplete():
		return TabClosureUnverified, fmt.Sprintf("the inventory before the close was not complete (controller: %s; person: %s)", before.Controller, before.Person)
	case !before.listed():
		return TabClosureUnverified, "the inventories before the close did not list the tab"
	case after == nil:
		return TabClosureUnverified, "no inventory was taken after the close"
	case !after.unionComplete():
		return TabClosureUnverified, fmt.Sprintf("the inventory after the close was not complete (controller: %s; person: %s)", after.Controller, after.Person)
	case after.listed():
		return TabClosureUnverified, fmt.Sprintf("the tab is still listed after the close (controller: %s; person: %s)", after.Controller, after.Person)
	}
	return TabClosedVerified, "listed by complete controller and person inventories before, close confirmed, absent from both after"
}

// RecordTabFacts records facts about tab record id, in order, under the
// run's fence (a probe record's also with a zero Fence), for epoch, which must be the record's current epoch (else
// ErrIllegalTransition: the caller inspected an epoch that is over). It
// returns what the record's facts now prove (CloseProof). It changes no
// state: the caller writes the outcome with UpdateTab.
func (db *DB) RecordTabFacts(ctx context.Context, f Fence, id int64, epoch int, facts ...TabFact) (TabState, error) {
	for _, fact := range facts {
		if err := fact.check(); err != nil {
			return "", fmt.Errorf("record facts of tab record %d: %w", id, err)
		}
	}
	var state TabState
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		t, err := getTab(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := checkTabFence(ctx, tx, f, t.Purpose); err != nil {
			return err
		}
		if t.Epoch != epoch {
			return fmt.Errorf("%w: facts of epoch %d for tab record %d in epoch %d", ErrIllegalTransition, epoch, id, t.Epoch)
		}
		now := nanos(db.now())
		for _, fact := range facts {
			inv := func(s Sight) (any, any) {
				if !s.Taken {
					return nil, nil
				}
				return s.Complete, s.Listed
			}
			cc, cl := inv(fact.Controller)
			pc, pl := inv(fact.Person)
			var sent, confirmed, gone any
			if fact.Kind == FactCloseReceipt {
				sent, confirmed, gone = fact.Sent, fact.Confirmed, fact.Gone
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO tab_facts (tab_id, epoch, kind, controller_complete, controller_listed,
				person_complete, person_listed, receipt_sent, receipt_confirmed, receipt_gone, generation, at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, epoch, fact.Kind, cc, cl, pc, pl, sent, confirmed, gone,
				f.Generation, now); err != nil {
				return err
			}
		}
		all, err := tabFacts(ctx, tx, id)
		state, _ = CloseProof(t, all)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("record facts of tab record %d: %w", id, err)
	}
	return state, nil
}

// TabFacts returns every fact recorded about tab record id, every epoch's,
// in the order they were recorded.
func (db *DB) TabFacts(ctx context.Context, id int64) ([]TabFact, error) {
	facts, err := tabFacts(ctx, db.read, id)
	if err != nil {
		return nil, fmt.Errorf("facts of tab record %d: %w", id, err)
	}
	return facts, nil
}

func tabFacts(ctx context.Context, q querier, id int64) ([]TabFact, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, tab_id, epoch, kind, controller_complete, controller_listed, person_complete,
		person_listed, COALESCE(receipt_sent, 0), COALESCE(receipt_confirmed, 0), COALESCE(receipt_gone, 0), generation, at
		FROM tab_facts WHERE tab_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TabFact
	for rows.Next() {
		var f TabFact
		var cc, cl, pc, pl sql.NullBool
		var at int64
		if err := rows.Scan(&f.Seq, &f.TabID, &f.Epoch, &f.Kind, &cc, &cl, &pc, &pl, &f.Sent, &f.Confirmed, &f.Gone,
			&f.Generation, &at); err != nil {
			return nil, err
		}
		f.Controller = Sight{Taken: cc.Valid, Complete: cc.Bool, Listed: cl.Bool}
		f.Person = Sight{Taken: pc.Valid, Complete: pc.Bool, Listed: pl.Bool}
		f.At = fromNanos(at)
		out = append(out, f)
	}
	return out, rows.Err()
}

// DefaultTabRetention is how long a tab record proven closed
// (closed_verified) is kept before PruneTabs removes it, raw target id and
// facts with it.
const DefaultTabRetention = 30 * 24 * time.Hour

// PruneTabs removes, under the run's fence, the tab records proven closed
// (closed_verified) last updated before cutoff, with their facts, and
// returns how many it removed. A record in any other state is never
// pruned, however old; nor is one a confirmation's handoff names (the
// confirmation keeps referring to it), nor one that field provenance
// names (provenance is never deleted, and keeps referring to it).
func (db *DB) PruneTabs(ctx context.Context, f Fence, cutoff time.Time) (int, error) {
	var n int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		// A record field provenance names is kept: that provenance is
		// never deleted, and refers to it.
		const prunable = `SELECT id FROM tabs WHERE state = 'closed_verified' AND updated_at < ?
			AND id NOT IN (SELECT handoff_tab_id FROM confirmations WHERE handoff_tab_id IS NOT NULL)
			AND id NOT IN (SELECT tab_id FROM field_provenance)`
		for _, table := range []string{"tab_facts", "tab_uses"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE tab_id IN (`+prunable+`)`, nanos(cutoff)); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM tabs WHERE id IN (`+prunable+`)`, nanos(cutoff))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune tab records: %w", err)
	}
	return int(n), nil
}
