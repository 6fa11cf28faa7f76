package operator

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/ledger"
)

// keepSet is the set of tabs a pass's cleanup must leave open: every tab
// handed to the person that is still there. It is built from the ledger's
// handoff records (keepSetOf) and checked against complete inventories
// before anything is closed (validate).
type keepSet struct {
	// records are the handoff records the ledger holds, by record id.
	records map[int64]ledger.Tab
	// targets are the handoff records' targets.
	targets map[browser.TargetID]int64
}

// keepSetOf builds the keep set from the handoff records.
func keepSetOf(handoffs []ledger.Tab) keepSet {
	k := keepSet{records: map[int64]ledger.Tab{}, targets: map[browser.TargetID]int64{}}
	for _, rec := range handoffs {
		if rec.State != ledger.TabHandoff {
			continue
		}
		k.records[rec.ID] = rec
		if rec.TargetID != "" {
			k.targets[browser.TargetID(rec.TargetID)] = rec.ID
		}
	}
	return k
}

// validate checks the keep set against the cleanup it guards, and returns
// why the cleanup must stop, "" when it may go on:
//   - the inventories must be complete (a partial view cannot say which
//     handed-off tabs are live);
//   - every handoff record the ledger holds now (current) must be in the
//     set, with the same target and epoch (a set built before a record
//     changed is stale), and every record in the set must still be a
//     handoff record there;
//   - every handoff record whose target the inventories list must be in
//     the set (none may be missing from it: an empty or partial set while
//     handed-off tabs are live stops the cleanup);
//   - no tab to close may be in the set, nor be a handoff record's target.
func (k keepSet) validate(s sighting, current []ledger.Tab, closing []browser.TargetID) string {
	if !s.complete() {
		return "no complete inventory of both surfaces: which handed-off tabs are live cannot be told"
	}
	now := keepSetOf(current)
	var why []string
	for id, rec := range now.records {
		kept, ok := k.records[id]
		switch {
		case !ok:
			why = append(why, fmt.Sprintf("handoff record %d is not in the keep set", id))
		case kept.TargetID != rec.TargetID || kept.Epoch != rec.Epoch:
			why = append(why, fmt.Sprintf("the keep set's handoff record %d is stale (its target or epoch changed)", id))
		}
	}
	for id := range k.records {
		if _, ok := now.records[id]; !ok {
			why = append(why, fmt.Sprintf("the keep set's record %d is no handoff record now (stale)", id))
		}
	}
	for target, id := range now.targets {
		if s.has(target) {
			if _, ok := k.targets[target]; !ok {
				why = append(why, fmt.Sprintf("the live handed-off tab of record %d is missing from the keep set", id))
			}
		}
	}
	for _, id := range closing {
		if rec, ok := now.targets[id]; ok {
			why = append(why, fmt.Sprintf("a tab to close is the handed-off tab of record %d", rec))
		} else if _, ok := k.targets[id]; ok {
			why = append(why, "a tab to close is in the keep set")
		}
	}
	slices.Sort(why)
	return strings.Join(slices.Compact(why), "; ")
}

// keepSetHolds builds the keep set of the pass's cleanup from the ledger's
// handoff records, takes inventories of both surfaces, reads the records
// again and validates the set against them and the pass's tabs that would
// be closed. When it does not hold, the cleanup stops: nothing is closed,
// the summary counts it and the log says why.
func (p *pass) keepSetHolds(ctx context.Context, b *browser.Browser) bool {
	handoffs, err := p.r.db.ListTabs(ctx, "", ledger.TabHandoff)
	if err != nil {
		p.r.log.Warn("the pass's tabs stay open: the handed-off tabs could not be read", "err", err)
		p.sum.count(CountCleanupStopped)
		return false
	}
	keep := keepSetOf(handoffs)
	var closing, ids []browser.TargetID
	for _, st := range p.tabs {
		if st.rec.State != ledger.TabHandoff && st.rec.State != ledger.TabOpening && st.rec.TargetID != "" {
			closing = append(closing, browser.TargetID(st.rec.TargetID))
		}
	}
	for id := range keep.targets {
		ids = append(ids, id)
	}
	s := sight(ctx, b, append(ids, closing...)...)
	current, err := p.r.db.ListTabs(ctx, "", ledger.TabHandoff)
	if err != nil {
		p.r.log.Warn("the pass's tabs stay open: the handed-off tabs could not be read", "err", err)
		p.sum.count(CountCleanupStopped)
		return false
	}
	if why := keep.validate(s, current, closing); why != "" {
		p.r.log.Warn("the pass's tabs stay open: the keep set does not hold", "why", why)
		p.sum.count(CountCleanupStopped)
		return false
	}
	return true
}
