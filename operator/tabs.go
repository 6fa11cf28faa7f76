package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
)

// siteTab is the tab a pass owns for one site.
type siteTab struct {
	site     sites.Adapter
	tab      *browser.Tab
	rec      ledger.Tab
	identity string
}

// tabFor returns the pass's owned tab for a site, opening it (and checking
// who is signed in) the first time, and recovering it when it went missing.
// A *sites.HardStop comes back as is for the caller to stop the pass.
func (p *pass) tabFor(name string) (*siteTab, error) {
	site, ok := p.r.sites[name]
	if !ok {
		return nil, fmt.Errorf("%w: site %q has no adapter (configured: %v)", ErrConfig, name, p.r.siteNames())
	}
	st := p.tabs[name]
	if st != nil && st.tab.Err() == nil {
		return st, nil
	}
	b, err := p.r.getBrowser(p.ctx)
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	if !p.tabsReconciled {
		p.tabsReconciled = true
		if err := p.reconcileTabs(b); err != nil {
			return nil, err
		}
	}
	if st != nil {
		return st, p.recoverTab(b, st)
	}
	// The record comes first, in state opening, and the tab opens on a
	// marker URL naming it: a crash between the two leaves a record the
	// next pass finds the tab by (reconcileTabs).
	rec, err := p.r.db.RecordTab(p.ctx, p.fence(), ledger.Tab{RunID: p.run.ID, State: ledger.TabOpening,
		Surface: ledger.SurfaceOwned, Ownership: ledger.Owned, URL: browser.NormalizeURL(site.Origins()[0]),
		BindingHash: browser.BindingHash(name, p.run.ID)})
	if err != nil {
		return nil, err
	}
	tab, err := b.NewTab(p.ctx, tabMarker(rec))
	if err != nil {
		// The record stays opening: if the tab came to be after all, the
		// next pass finds it by its marker and closes it.
		return nil, fmt.Errorf("open a tab for %s: %w", name, err)
	}
	armTab(tab, p.r.cfg.ActionTimeout)
	crashPoint("tab-created")
	rec, err = p.r.db.UpdateTab(p.ctx, p.fence(), rec.ID, ledger.TabChange{State: ledger.TabLive, TargetID: tab.ID().Raw()})
	if err != nil {
		// The tab is ours even without its target recorded; close it
		// rather than leave it.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 5*time.Second)
		b.CloseTab(cctx, tab)
		cancel()
		return nil, err
	}
	st = &siteTab{site: site, tab: tab, rec: rec}
	p.tabs[name] = st
	return st, p.checkIdentity(st)
}

// checkIdentity opens the site's home in the tab and reads who is signed in.
func (p *pass) checkIdentity(st *siteTab) error {
	status, err := st.site.OpenHome(p.ctx, st.tab)
	if err != nil {
		return err
	}
	if blk, err := st.site.Blocker(p.ctx, st.tab, status); err != nil {
		return err
	} else if blk.Blocked() {
		return &sites.HardStop{Kind: sites.StopKindOf(blk.Kind), Detail: blk.Detail}
	}
	who, err := st.site.Identity(p.ctx, st.tab)
	if err != nil {
		return err
	}
	st.identity = who
	return nil
}

// recoverTab handles an owned tab that disappeared (closed by the person, or
// crashed): its record goes missing, a new tab opens on the stored URL only,
// the inspection epoch moves on (evidence from before is void), and origin
// and identity are checked again.
func (p *pass) recoverTab(b *browser.Browser, st *siteTab) error {
	rec, err := p.r.db.UpdateTab(p.ctx, p.fence(), st.rec.ID, ledger.TabChange{State: ledger.TabMissing})
	if err != nil {
		return err
	}
	p.sum.count("tabs_recovered")
	p.r.log.Warn("owned tab went missing; reopening it", "run", p.run.ID, "epoch", rec.Epoch+1)
	if rec, err = p.r.db.UpdateTab(p.ctx, p.fence(), rec.ID, ledger.TabChange{State: ledger.TabOpening}); err != nil {
		return err
	}
	st.rec = rec
	tab, err := b.NewTab(p.ctx, tabMarker(rec))
	if err != nil {
		return fmt.Errorf("reopen the tab for %s: %w", st.site.Name(), err)
	}
	armTab(tab, p.r.cfg.ActionTimeout)
	rec, err = p.r.db.UpdateTab(p.ctx, p.fence(), rec.ID, ledger.TabChange{State: ledger.TabLive, TargetID: tab.ID().Raw(), NewEpoch: true})
	if err != nil {
		return err
	}
	st.tab, st.rec = tab, rec
	if _, err := tab.Navigate(p.ctx, rec.URL); err != nil {
		return fmt.Errorf("reopen the tab for %s: %w", st.site.Name(), err)
	}
	st.tab, st.rec, st.identity = tab, rec, ""
	origin, err := tab.Origin(p.ctx)
	if err != nil {
		return err
	}
	if browser.NormalizeURL(origin) != rec.URL {
		return &sites.HardStop{Kind: sites.StopOffsite, Detail: "the reopened tab is not on the site's origin"}
	}
	return p.checkIdentity(st)
}

// tabMarker is the URL an owned tab is created on: about:blank with a
// fragment naming its ledger record. It is what finds a tab whose target
// id was never recorded (a crash right after creating it). A person's tab
// cannot carry it by chance; a page never sees it.
func tabMarker(rec ledger.Tab) string {
	return fmt.Sprintf("about:blank#browserop-tab-%d-%s", rec.ID, rec.BindingHash[:min(16, len(rec.BindingHash))])
}

// earlierTabs returns the tab records earlier passes left live or opening
// (a pass that died keeps its tabs).
func (p *pass) earlierTabs() ([]ledger.Tab, error) {
	recs, err := p.r.db.ListTabs(p.ctx, "", ledger.TabOpening, ledger.TabLive)
	if err != nil {
		return nil, err
	}
	out := recs[:0]
	for _, rec := range recs {
		if rec.RunID != p.run.ID {
			out = append(out, rec)
		}
	}
	return out, nil
}

// reconcileTabsAtStart reconciles earlier passes' tab records when the
// pass starts, so that a pass with nothing to do still closes what an
// earlier one left open. It uses a browser that runs already (attach mode,
// or a Chrome left running on the dedicated profile) and never starts one:
// the tabs of a browser that is not running are gone, and their records
// wait for the next pass that uses the browser.
func (p *pass) reconcileTabsAtStart() error {
	recs, err := p.earlierTabs()
	if err != nil || len(recs) == 0 {
		return err
	}
	if p.r.current() == nil && (p.r.cfg.BrowserRunning == nil || !p.r.cfg.BrowserRunning()) {
		return nil
	}
	b, err := p.r.getBrowser(p.ctx)
	if err != nil {
		p.r.log.Warn("earlier tab records stay as they are: no browser", "records", len(recs), "err", err)
		return nil
	}
	p.tabsReconciled = true
	return p.reconcileTabs(b)
}

// reconcileTabs compares the tab records earlier passes left live or
// opening with a complete inventory of the browser: a recorded tab that is
// gone is missing; one still there, still on its recorded origin (or, for
// an opening record, still on its marker), is browserop's own and is
// closed with proof. Nothing is concluded from an incomplete inventory,
// and a handed-off tab stays open.
func (p *pass) reconcileTabs(b *browser.Browser) error {
	recs, err := p.earlierTabs()
	if err != nil || len(recs) == 0 {
		return err
	}
	inv, err := b.Targets(p.ctx)
	if err != nil || !inv.Complete {
		p.r.log.Warn("no complete tab inventory; leaving earlier tab records as they are")
		return nil
	}
	for _, rec := range recs {
		var present *browser.Target
		for i := range inv.Targets {
			t := &inv.Targets[i]
			if rec.State == ledger.TabOpening && t.URL == tabMarker(rec) ||
				rec.State == ledger.TabLive && t.ID == browser.TargetID(rec.TargetID) {
				present = t
			}
		}
		if present == nil {
			if _, err := p.r.db.UpdateTab(p.ctx, p.fence(), rec.ID, ledger.TabChange{State: ledger.TabMissing}); err != nil {
				return err
			}
			p.sum.count("tabs_missing")
			continue
		}
		if rec.State == ledger.TabLive && browser.NormalizeURL(browser.Origin(present.URL)) != browser.NormalizeURL(browser.Origin(rec.URL)) {
			// Navigated elsewhere since: perhaps by the person. Not touched.
			p.r.log.Warn("an earlier owned tab is on another origin now; leaving it open", "record", rec.ID)
			continue
		}
		if err := b.Adopt(p.ctx, present.ID); err != nil {
			continue
		}
		tab, err := b.AttachOwned(p.ctx, present.ID)
		if err != nil {
			continue
		}
		state := p.closeWithProof(b, p.ctx, tab)
		change := ledger.TabChange{State: state}
		if rec.State == ledger.TabOpening {
			// The tab found by its marker: its target goes on the record
			// (a reopened tab's is new evidence, hence a new epoch).
			change.TargetID = present.ID.Raw()
			change.NewEpoch = rec.TargetID != "" && rec.TargetID != present.ID.Raw()
		}
		if _, err := p.r.db.UpdateTab(p.ctx, p.fence(), rec.ID, change); err != nil {
			return err
		}
		p.sum.count("tabs_" + string(state))
	}
	return nil
}

// handOff gives the site's tab to the person: its record becomes handoff
// (bound to the task), it is left open, and the pass uses a new tab for the
// site from now on.
func (p *pass) handOff(site, taskID string) error {
	st := p.tabs[site]
	if st == nil {
		return nil
	}
	rec, err := p.r.db.UpdateTab(p.ctx, p.fence(), st.rec.ID, ledger.TabChange{State: ledger.TabHandoff, TaskID: taskID})
	if err != nil {
		return err
	}
	st.tab.Release()
	if b := p.r.current(); b != nil {
		b.Disown(st.tab.ID()) // the person's now: it keeps a launched Chrome running
	}
	delete(p.tabs, site)
	p.sum.count("tabs_handed_off")
	p.r.log.Info("tab handed to the person", "run", p.run.ID, "record", rec.ID)
	return nil
}

// closeTabs closes the pass's owned tabs with proof: closed_verified needs a
// complete inventory listing the tab before, a close receipt, and its
// absence from a complete inventory after; anything less is
// closure_unverified. Tabs handed to a person stay open.
func (p *pass) closeTabs() {
	if len(p.tabs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 20*time.Second)
	defer cancel()
	b := p.r.current() // never start a browser just to close tabs
	for _, st := range p.tabs {
		if st.rec.State == ledger.TabHandoff || st.rec.State == ledger.TabOpening {
			// Handed to the person; or being reopened when the pass
			// ended, its record left for the next pass to find by marker.
			continue
		}
		state := ledger.TabClosureUnverified // the browser is gone: nothing to prove it with
		if b != nil {
			state = p.closeWithProof(b, ctx, st.tab)
		}
		if _, err := p.r.db.UpdateTab(ctx, p.fence(), st.rec.ID, ledger.TabChange{State: state}); err != nil {
			p.r.log.Error("record the tab's closure", "err", err)
		}
		p.sum.count("tabs_" + string(state))
	}
}

// armTab sets a new owned tab's action deadline and its crash hook.
func armTab(tab *browser.Tab, timeout time.Duration) {
	tab.SetActionTimeout(timeout)
	if armed["after-click-sent"] {
		tab.OnClickDispatched(func() { crashPoint("after-click-sent") })
	}
}

// closeWithProof closes an owned tab and says what was proven:
// closed_verified needs a complete inventory listing it before, a confirmed
// close receipt, and its absence from a complete inventory after.
func (p *pass) closeWithProof(b *browser.Browser, ctx context.Context, tab *browser.Tab) ledger.TabState {
	id := tab.ID()
	before, berr := b.Targets(ctx)
	crashPoint("tab-close")
	receipt, cerr := b.CloseTab(ctx, tab)
	after, aerr := b.Targets(ctx)
	switch {
	case berr == nil && aerr == nil && before.Complete && after.Complete && before.Has(id) &&
		receipt.Sent && receipt.Confirmed && cerr == nil && !after.Has(id):
		return ledger.TabClosedVerified
	case errors.Is(cerr, browser.ErrTabGone) && aerr == nil && after.Complete && !after.Has(id):
		return ledger.TabMissing // gone before it was closed: there is no close to prove
	}
	return ledger.TabClosureUnverified
}

func (r *Runner) siteNames() []string {
	var out []string
	for n := range r.sites {
		out = append(out, n)
	}
	return out
}
