package operator

import (
	"context"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
)

// TabMarker is tabMarker, for tests that play a pass that died.
var TabMarker = tabMarker

// DeadClick plays a pass that died right after it clicked: under a lease
// of its own (holder "dead-operator", expiring after ttl) it records its
// run, the task and action of calendar entry e exactly as a pass would, a
// live tab record for the site on targetID, and moves the action to
// executing. Nothing is clicked here: the test makes the late click land
// (or not) itself. Each of handedOff is the target of another tab of the
// same run and site, recorded as handed to the person (a confirmation's).
func DeadClick(ctx context.Context, db *ledger.DB, site sites.Adapter, e calendar.Entry, targetID string, ttl time.Duration, handedOff ...string) (ledger.Action, ledger.Tab, error) {
	lease, err := db.AcquireLease(ctx, "browser-operator", "dead-operator", ttl)
	if err != nil {
		return ledger.Action{}, ledger.Tab{}, err
	}
	run, err := db.StartRun(ctx, lease)
	if err != nil {
		return ledger.Action{}, ledger.Tab{}, err
	}
	f := ledger.Fence{Lease: lease.Name, Generation: lease.Generation}
	origin := "calendar:" + e.ID
	task, _, err := db.CreateTask(ctx, origin, ledger.TaskRequest{Title: e.ID, Source: "calendar",
		Contract: contractFor(site, e.Type.Capability()), Input: entryInput(e)})
	if err != nil {
		return ledger.Action{}, ledger.Tab{}, err
	}
	a, _, err := db.Reserve(ctx, f, entryIntent(e, task, ownTask(origin)).ledgerIntent(run.ID))
	if err != nil {
		return ledger.Action{}, ledger.Tab{}, err
	}
	for _, id := range handedOff {
		h, err := db.RecordTab(ctx, f, ledger.Tab{RunID: run.ID, State: ledger.TabLive, TargetID: id,
			Surface: ledger.SurfaceOwned, Ownership: ledger.Owned, URL: browser.LooseURL(site.Origins()[0]),
			BindingHash: browser.BindingHash(site.Name(), run.ID)})
		if err == nil {
			_, err = db.UpdateTab(ctx, f, h.ID, ledger.TabChange{State: ledger.TabHandoff})
		}
		if err != nil {
			return ledger.Action{}, ledger.Tab{}, err
		}
	}
	tab, err := db.RecordTab(ctx, f, ledger.Tab{RunID: run.ID, State: ledger.TabLive, TargetID: targetID,
		Surface: ledger.SurfaceOwned, Ownership: ledger.Owned, URL: browser.LooseURL(site.Origins()[0]),
		BindingHash: browser.BindingHash(site.Name(), run.ID)})
	if err != nil {
		return ledger.Action{}, ledger.Tab{}, err
	}
	a, err = db.Transition(ctx, f, a.ID, ledger.Change{To: ledger.Executing, Reason: "performing once"})
	return a, tab, err
}
