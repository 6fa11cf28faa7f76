package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/errcode"
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
		return nil, fmt.Errorf("%w: site %q has no adapter (configured: %v)", errcode.ErrConfig, name, p.r.siteNames())
	}
	st := p.tabs[name]
	if st != nil && st.tab.Err() == nil {
		return st, nil
	}
	if st != nil {
		p.r.awaitConnectionEnd(st.tab)
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
		if err := p.reconcileHandoffTabs(b); err != nil {
			return nil, err
		}
	}
	if st != nil {
		if errors.Is(st.tab.Err(), browser.ErrBrowserGone) {
			// The connection ended, not necessarily the tab: a browser
			// that lives on (attach mode, a persistent launch) still has it.
			if tab := p.findOwned(p.ctx, b, st.rec); tab != nil {
				return st, p.resumeTab(st, tab)
			}
		}
		return st, p.recoverTab(b, st)
	}
	// The record comes first, in state opening, and the tab opens on a
	// marker URL naming it: a crash between the two leaves a record the
	// next pass finds the tab by (reconcileTabs).
	rec, err := p.r.db.RecordTab(p.ctx, p.fence(), ledger.Tab{RunID: p.run.ID, State: ledger.TabOpening,
		Surface: ledger.SurfaceOwned, Ownership: ledger.Owned, URL: browser.LooseURL(site.Origins()[0]),
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
		hs := &sites.HardStop{Kind: sites.StopKindOf(blk.Kind), Detail: blk.Detail}
		return errors.Join(hs, p.noteBlocker(st, hs))
	}
	who, err := st.site.Identity(p.ctx, st.tab)
	if err != nil {
		return err
	}
	st.identity = who
	return p.sawAccount(st.site.Name(), who)
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
	p.sum.count(CountTabsRecovered)
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
		// Ours without its target recorded: close it rather than leave it
		// (the record stays opening for the next pass).
		cctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 5*time.Second)
		b.CloseTab(cctx, tab)
		cancel()
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
	if browser.LooseURL(origin) != rec.URL {
		return &sites.HardStop{Kind: sites.StopOffsite, Detail: "the reopened tab is not on the site's origin"}
	}
	return p.checkIdentity(st)
}

// findOwned finds a recorded tab again in a complete inventory of b (its
// handle died with a connection, or belongs to an earlier pass) and
// attaches to it as owned. It returns nil when the tab is gone, or it
// cannot tell or cannot attach.
func (p *pass) findOwned(ctx context.Context, b *browser.Browser, rec ledger.Tab) *browser.Tab {
	if rec.TargetID == "" {
		return nil
	}
	id := browser.TargetID(rec.TargetID)
	inv, err := b.Targets(ctx)
	if err != nil || !inv.Complete || !inv.Has(id) || b.Adopt(ctx, id) != nil {
		return nil
	}
	tab, err := b.AttachOwned(ctx, id)
	if err != nil {
		return nil
	}
	return tab
}

// resumeTab takes up the site's tab again on a new connection: a new
// inspection epoch (evidence from before is void), then origin and
// identity checked again on the site's home.
func (p *pass) resumeTab(st *siteTab, tab *browser.Tab) error {
	armTab(tab, p.r.cfg.ActionTimeout)
	rec, err := p.r.db.UpdateTab(p.ctx, p.fence(), st.rec.ID, ledger.TabChange{NewEpoch: true})
	if err != nil {
		return err
	}
	st.tab, st.rec, st.identity = tab, rec, ""
	p.sum.count(CountTabsResumed)
	p.r.log.Warn("the browser connection ended; taking the site's tab up again", "run", p.run.ID, "epoch", rec.Epoch)
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
// (a pass that died keeps its tabs), or closure_unverified (a pass whose
// connection ended could not close them, and the browser may live on), or
// kept (left open by the cleanup preference: looked at again, never
// reused). A probe record (doctor, sites check, login) counts only once
// the command that opened it has ended.
func (p *pass) earlierTabs() ([]ledger.Tab, error) {
	recs, err := p.r.db.ListTabs(p.ctx, "", ledger.TabOpening, ledger.TabLive, ledger.TabClosureUnverified, ledger.TabKept)
	if err != nil {
		return nil, err
	}
	out := recs[:0]
	for _, rec := range recs {
		if rec.Purpose.Probe() && rec.State != ledger.TabKept && !probeEnded(rec) {
			continue // the command that opened it is still at work
		}
		if rec.RunID != p.run.ID && (rec.State != ledger.TabClosureUnverified && rec.State != ledger.TabKept || rec.TargetID != "") {
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
	if err := p.pruneTabs(); err != nil {
		return err
	}
	recs, err := p.earlierTabs()
	if err != nil {
		return err
	}
	handed, err := p.r.db.ListTabs(p.ctx, "", ledger.TabHandoff)
	if err != nil || len(recs)+len(handed) == 0 {
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
	if err := p.reconcileTabs(b); err != nil {
		return err
	}
	return p.reconcileHandoffTabs(b)
}

// reconcileTabs compares the tab records earlier passes left live or
// opening with complete inventories of both surfaces: a recorded tab that
// is gone from both is missing; one still there, still on its recorded
// origin (or, for an opening record, still on its marker), is browserop's
// own and is closed with proof. Nothing is concluded from an incomplete
// inventory, and a handed-off tab stays open.
func (p *pass) reconcileTabs(b *browser.Browser) error {
	recs, err := p.earlierTabs()
	if err != nil || len(recs) == 0 {
		return err
	}
	var ids []browser.TargetID
	for _, rec := range recs {
		ids = append(ids, browser.TargetID(rec.TargetID))
	}
	s := sight(p.ctx, b, ids...)
	if !s.complete() {
		p.r.log.Warn("no complete tab inventory; leaving earlier tab records as they are")
		return nil
	}
	for _, rec := range recs {
		if err := p.reconcileTab(b, s, rec); err != nil {
			return err
		}
	}
	return nil
}

// reconcileTab settles one earlier record against complete inventories.
// Its tabs are the one with its target id, on its recorded origin or still
// on its marker, and any other still on its marker (a reopening retried
// after a creation that answered too late). All are closed with proof; the
// record takes the state of the first, whose target it is given first (in
// a new epoch when it had another), so that the close's facts are of that
// target. None, on either surface: the record is missing, or
// closed_verified when its epoch's facts prove the close an earlier pass
// made. A tab with its target id on another origin is closed too when a
// form's response took it there (the site redirected browserop's
// submission); otherwise it is left open (the person may have taken it
// over), and so is its record; and so is one that only the person's
// windows still show. A tab the cleanup preference does not cover is not
// closed: its record is kept (mayClose); a kept record's tab is closed
// once the preference covers it, and a kept record whose tab is gone from
// both surfaces is missing (the person closed it).
func (p *pass) reconcileTab(b *browser.Browser, s sighting, rec ledger.Tab) error {
	marker := tabMarker(rec)
	id := browser.TargetID(rec.TargetID)
	var mine []browser.Target
	for _, t := range s.ctl.Targets {
		switch {
		case t.URL == marker:
			mine = append(mine, t)
		case rec.TargetID != "" && t.ID == browser.TargetID(rec.TargetID):
			if browser.LooseURL(browser.Origin(t.URL)) != browser.LooseURL(browser.Origin(rec.URL)) &&
				!p.submittedAway(b, t.ID) {
				p.r.log.Warn("an earlier owned tab is on another origin now; leaving it open", "record", rec.ID)
				return nil
			}
			mine = append([]browser.Target{t}, mine...)
		}
	}
	if len(mine) == 0 {
		if rec.TargetID != "" && s.person.Has(id) {
			p.r.log.Warn("an earlier owned tab is in the person's windows but not among the browser's targets; leaving it", "record", rec.ID)
			return nil
		}
		kind := ledger.FactInventoryReconciled
		if rec.State == ledger.TabClosureUnverified {
			kind = ledger.FactPostCloseAbsent // an earlier pass closed it, unproven
		}
		state, err := p.r.db.RecordTabFacts(p.ctx, p.fence(), rec.ID, rec.Epoch, s.fact(kind, id))
		if err != nil {
			return err
		}
		if state != ledger.TabClosedVerified {
			state = ledger.TabMissing // absent from both complete inventories
		}
		if _, err := p.r.db.UpdateTab(p.ctx, p.fence(), rec.ID, ledger.TabChange{State: state}); err != nil {
			return err
		}
		p.sum.count(tabsCount(state))
		return nil
	}
	if t := mine[0].ID.Raw(); t != rec.TargetID {
		// Found by its marker: its target goes on the record (a reopened
		// tab's is new evidence, hence a new epoch) before it is closed.
		var err error
		if rec, err = p.r.db.UpdateTab(p.ctx, p.fence(), rec.ID, ledger.TabChange{TargetID: t, NewEpoch: rec.TargetID != ""}); err != nil {
			return err
		}
	}
	if ok, why := p.mayClose(p.ctx, rec); !ok {
		// Not the preference's to close: left open, kept (a kept record
		// for the same reason stays as it is, neither lost nor reused).
		if rec.State == ledger.TabKept && rec.KeptReason == why {
			return nil
		}
		return p.keepTab(p.ctx, b, rec, nil, why)
	}
	var first ledger.TabState
	for i, t := range mine {
		state := ledger.TabClosureUnverified
		if b.Adopt(p.ctx, t.ID) == nil {
			// Closed without attaching: a page whose navigation hangs can
			// keep an attachment from completing. The facts go on the
			// record for its own tab only.
			var named *ledger.Tab
			if i == 0 {
				named = &rec
			}
			state = p.closeTargetWithProof(b, p.ctx, named, t.ID)
		}
		p.sum.count(tabsCount(state))
		if i == 0 {
			first = state
		}
	}
	if first == rec.State {
		return nil // still unproven: a later pass tries again
	}
	_, err := p.r.db.UpdateTab(p.ctx, p.fence(), rec.ID, ledger.TabChange{State: first})
	return err
}

// handOff gives the site's tab to the person: its record becomes handoff
// (bound to the task), it is brought to the front and proven visible
// (browser.BringToFront: what it proved is returned, for the message that
// says the tab is ready), it is left open, and the pass uses a new tab for
// the site from now on.
func (p *pass) handOff(site, taskID string) (browser.Visibility, error) {
	st := p.tabs[site]
	if st == nil {
		return browser.Visibility{Unverified: "no tab of the site's is open"}, nil
	}
	rec, err := p.r.db.UpdateTab(p.ctx, p.fence(), st.rec.ID, ledger.TabChange{State: ledger.TabHandoff, TaskID: taskID})
	if err != nil {
		return browser.Visibility{}, err
	}
	vis := browser.Visibility{Unverified: "no browser"}
	if b := p.r.current(); b != nil {
		ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
		vis = b.BringToFront(ctx, st.tab)
		cancel()
	}
	st.tab.AllowTeardown(false) // the person sees it now
	st.tab.Release()
	if b := p.r.current(); b != nil {
		b.Disown(st.tab.ID()) // the person's now: it keeps a launched Chrome running
	}
	delete(p.tabs, site)
	p.sum.count(CountTabsHandedOff)
	p.r.log.Info("tab handed to the person", "run", p.run.ID, "record", rec.ID,
		"visible", vis.Visible, "headless", vis.Headless, "window", vis.WindowState, "unverified", vis.Unverified)
	return vis, nil
}

// retireTab closes the site's owned tab with proof, records what was
// proven and drops the tab from the pass, so that the site's next action
// opens a fresh one: after a click proven not sent, the tab is left
// blocked on about:blank. A tab the cleanup preference does not cover is
// kept open instead, and dropped all the same. Only the ledger's errors
// are errors.
func (p *pass) retireTab(site string) error {
	st := p.tabs[site]
	if st == nil {
		return nil
	}
	delete(p.tabs, site)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 20*time.Second)
	defer cancel()
	if ok, why := p.mayClose(ctx, st.rec); !ok {
		return p.keepTab(ctx, p.r.current(), st.rec, st.tab, why)
	}
	state := ledger.TabClosureUnverified // no browser: a later pass looks again
	if b := p.r.current(); b != nil {
		state = p.closeWithProof(b, ctx, st.rec, st.tab)
	}
	if _, err := p.r.db.UpdateTab(ctx, p.fence(), st.rec.ID, ledger.TabChange{State: state}); err != nil {
		return fmt.Errorf("record the tab's closure: %w", err)
	}
	p.sum.count(tabsCount(state))
	return nil
}

// closeTabs closes the pass's owned tabs with proof (closeWithProof) that
// the profile's cleanup preference lets it close (mayClose); anything less
// than closed_verified is closure_unverified. The others stay open, kept
// (keepTab), and so do tabs handed to a person.
func (p *pass) closeTabs() {
	if len(p.tabs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 20*time.Second)
	defer cancel()
	for _, st := range p.tabs {
		p.r.awaitConnectionEnd(st.tab)
	}
	b := p.r.current()
	if b == nil && p.r.cfg.BrowserRunning != nil && p.r.cfg.BrowserRunning() {
		// The connection ended but the browser runs on, with the tabs in
		// it: connect again to close them (never start a browser for it).
		var err error
		if b, err = p.r.getBrowser(ctx); err != nil {
			p.r.log.Warn("cannot connect to close the pass's tabs", "err", err)
		}
	}
	if b != nil && !p.keepSetHolds(ctx, b) {
		// The tabs stay as they are, their records live: the next pass
		// reconciles them against its own inventories.
		return
	}
	for _, st := range p.tabs {
		if st.rec.State == ledger.TabHandoff || st.rec.State == ledger.TabOpening {
			// Handed to the person; or being reopened when the pass
			// ended, its record left for the next pass to find by marker.
			continue
		}
		if ok, why := p.mayClose(ctx, st.rec); !ok {
			// The cleanup preference does not cover this tab: it stays
			// open, recorded kept, and the summary says why.
			if err := p.keepTab(ctx, b, st.rec, st.tab, why); err != nil {
				p.r.log.Error("record the tab kept open", "err", err)
			}
			continue
		}
		state := ledger.TabClosureUnverified // no browser: nothing to prove it with (a later pass looks again)
		if b != nil {
			if errors.Is(st.tab.Err(), browser.ErrBrowserGone) {
				// The handle died with a connection; the tab may live on.
				state = p.closeRecorded(b, ctx, st.rec)
			} else {
				state = p.closeWithProof(b, ctx, st.rec, st.tab)
			}
		}
		if _, err := p.r.db.UpdateTab(ctx, p.fence(), st.rec.ID, ledger.TabChange{State: state}); err != nil {
			p.r.log.Error("record the tab's closure", "err", err)
		}
		p.sum.count(tabsCount(state))
	}
	if b != nil && p.tabsReconciled && errors.Is(context.Cause(p.ctx), context.Canceled) {
		// An earlier pass's tab this pass kept at its start, because an
		// action prepared in it was not sent yet, may be covered now (this
		// pass published that action from its own tab): it goes now,
		// with proof, rather than stay open beside the published copy
		// and keep a Chrome running until the next pass. Only after a
		// pass that ended as passes do (its context cancelled with no
		// other cause: not a lost lease), under the cleanup's deadline.
		pctx := p.ctx
		p.ctx = ctx
		if err := p.reconcileTabs(b); err != nil {
			p.r.log.Warn("earlier tab records stay as they are", "err", err)
		}
		p.ctx = pctx
	}
}

// awaitConnectionEnd waits (briefly) for the runner's browser connection
// to report its end when tab says it ended: a tab learns it a moment
// before the connection's Done closes, and the runner must not take the
// ending connection for a live one.
func (r *Runner) awaitConnectionEnd(tab *browser.Tab) {
	if !errors.Is(tab.Err(), browser.ErrBrowserGone) {
		return
	}
	r.mu.Lock()
	b := r.browser
	r.mu.Unlock()
	if b == nil {
		return
	}
	select {
	case <-b.Done():
	case <-time.After(2 * time.Second):
	}
}

// armTab sets the action deadline and the crash hook of a tab the pass
// owns and works in, which no person sees, and lets the tab tear its page
// down to prove that a committing click sent nothing (browser.ErrNotSent).
// A tab a person sees never comes here: handOff takes the permission back
// from the tab it hands over, and a handed-off tab attached again
// (readHandoffLanding) gets its deadline only.
func armTab(tab *browser.Tab, timeout time.Duration) {
	tab.SetActionTimeout(timeout)
	tab.AllowTeardown(true)
	if armed["after-click-sent"] || pauseArmed("after-click-sent") {
		tab.OnClickDispatched(func() { crashPoint("after-click-sent") })
	}
}

// closeWithProof closes an owned tab and says what was proven, from the
// facts it records on the tab's record (see proveClose).
func (p *pass) closeWithProof(b *browser.Browser, ctx context.Context, rec ledger.Tab, tab *browser.Tab) ledger.TabState {
	return p.proveClose(b, ctx, &rec, tab.ID(), func() (browser.CloseReceipt, error) { return b.CloseTab(ctx, tab) })
}

// submittedAway reports whether an earlier pass's tab, found on another
// origin than its record's, got there by a form's response (a site that
// redirected browserop's submission elsewhere), as its navigation history
// says. Any other way (an address typed, a link followed, a history it
// cannot read) may be the person's doing, and the tab stays theirs.
func (p *pass) submittedAway(b *browser.Browser, id browser.TargetID) bool {
	if b.Adopt(p.ctx, id) != nil {
		return false
	}
	tab, err := b.AttachOwned(p.ctx, id)
	if err != nil {
		b.Disown(id)
		return false
	}
	tr, err := tab.Transition(p.ctx)
	tab.Release()
	if err != nil || tr != "form_submit" {
		b.Disown(id)
		return false
	}
	return true
}

// closeRecorded closes a recorded tab this connection has no handle to,
// with proof: missing when complete inventories of both surfaces do not
// list it. A tab only the person's windows show is left (browserop cannot
// drive it).
func (p *pass) closeRecorded(b *browser.Browser, ctx context.Context, rec ledger.Tab) ledger.TabState {
	if rec.TargetID == "" {
		return ledger.TabClosureUnverified
	}
	id := browser.TargetID(rec.TargetID)
	s := sight(ctx, b, id)
	if !s.complete() || !s.has(id) {
		// Recorded either way: an incomplete inventory shows why nothing
		// is proven, a complete one without the tab proves it missing.
		state, err := p.r.db.RecordTabFacts(ctx, p.fence(), rec.ID, rec.Epoch, s.fact(ledger.FactInventoryReconciled, id))
		if err != nil || state != ledger.TabMissing {
			return ledger.TabClosureUnverified
		}
		return ledger.TabMissing
	}
	if !s.ctl.Has(id) || b.Adopt(ctx, id) != nil {
		return ledger.TabClosureUnverified
	}
	return p.closeTargetWithProof(b, ctx, &rec, id)
}

// closeTargetWithProof is closeWithProof for an owned tab the pass has no
// attachment to (an earlier pass's). rec is the record naming the tab, or
// nil for a tab no record names (another tab still on a record's marker).
func (p *pass) closeTargetWithProof(b *browser.Browser, ctx context.Context, rec *ledger.Tab, id browser.TargetID) ledger.TabState {
	return p.proveClose(b, ctx, rec, id, func() (browser.CloseReceipt, error) { return b.CloseTarget(ctx, id) })
}

// proveClose runs closeTab between inventories of both surfaces and
// records what it observed, as it observes it, as the facts of rec's
// current epoch (proveCloseWith), under the pass's fence.
func (p *pass) proveClose(b *browser.Browser, ctx context.Context, rec *ledger.Tab, id browser.TargetID, closeTab func() (browser.CloseReceipt, error)) ledger.TabState {
	return proveCloseWith(ctx, b, p.r.db, p.fence(), rec, id, closeTab, p.r.log, func(point string) {
		if point == "before" {
			crashPoint("tab-close")
		}
		p.r.atTabClose(point)
	})
}

// proveCloseWith runs closeTab between inventories of both surfaces and
// records what it observed, as it observes it, as the facts of rec's
// current epoch: the inventories before (inventory_reconciled), the close
// receipt, the inventories after (post_close_absent). What they prove is
// the ledger's to say (ledger.CloseProof): closed_verified, missing (the
// tab was gone before it was closed), else closure_unverified. A tab no
// record names gets the same verdict from facts kept in memory. It is the
// one close-proof path: a pass's tabs (under the lease's fence) and the
// probe tabs of commands (with none) go through it. at, when not nil, runs
// at the two points of the close ("before", "after").
func proveCloseWith(ctx context.Context, b *browser.Browser, db *ledger.DB, f ledger.Fence, rec *ledger.Tab, id browser.TargetID,
	closeTab func() (browser.CloseReceipt, error), log *slog.Logger, at func(string)) ledger.TabState {
	var kept []ledger.TabFact
	state := ledger.TabState("")
	record := func(fact ledger.TabFact) {
		if rec == nil || rec.TargetID != id.Raw() {
			fact.TabID, fact.Epoch, fact.Seq = 0, 1, int64(len(kept)+1)
			kept = append(kept, fact)
			state, _ = ledger.CloseProof(ledger.Tab{Epoch: 1}, kept)
			return
		}
		var err error
		if state, err = db.RecordTabFacts(ctx, f, rec.ID, rec.Epoch, fact); err != nil {
			log.Error("record a fact of the tab's close", "record", rec.ID, "fact", fact.Kind, "err", err)
			state = ledger.TabClosureUnverified
		}
	}
	if at == nil {
		at = func(string) {}
	}
	record(sight(ctx, b, id).fact(ledger.FactInventoryReconciled, id))
	at("before")
	receipt, cerr := closeTab()
	record(ledger.TabFact{Kind: ledger.FactCloseReceipt, Sent: receipt.Sent, Confirmed: receipt.Confirmed,
		Gone: errors.Is(cerr, browser.ErrTabGone)})
	at("after")
	record(sight(ctx, b, id).fact(ledger.FactPostCloseAbsent, id))
	if state != ledger.TabClosedVerified && state != ledger.TabMissing {
		return ledger.TabClosureUnverified
	}
	return state
}

// sighting is a tab's inventories on both surfaces, taken together: the
// controller's (the browser's page targets) and the person's (the tabs in
// the person's windows).
type sighting struct {
	ctl, person browser.Inventory
}

// sight takes the controller's inventory, then the person's, asking the
// window layer about ids besides. Errors leave an inventory incomplete.
func sight(ctx context.Context, b *browser.Browser, ids ...browser.TargetID) sighting {
	ctl, _ := b.Targets(ctx)
	ctl.Surface = browser.SurfaceController
	person, _ := b.Windows(ctx, ctl, ids...)
	return sighting{ctl: ctl, person: person}
}

// complete reports whether both inventories are complete: only then does
// absence from them prove a tab gone.
func (s sighting) complete() bool { return s.ctl.Complete && s.person.Complete }

// has reports whether either inventory lists the tab.
func (s sighting) has(id browser.TargetID) bool {
	return id != "" && (s.ctl.Has(id) || s.person.Has(id))
}

// fact is the sighting as a fact of kind about tab id.
func (s sighting) fact(kind ledger.TabFactKind, id browser.TargetID) ledger.TabFact {
	return ledger.TabFact{Kind: kind,
		Controller: ledger.Sight{Taken: true, Complete: s.ctl.Complete, Listed: id != "" && s.ctl.Has(id)},
		Person:     ledger.Sight{Taken: true, Complete: s.person.Complete, Listed: id != "" && s.person.Has(id)}}
}

// tabCloseHooks holds, per Runner, a function tests run at the two points
// of a close ("before": after the inventories before it; "after": after
// its receipt, before the inventories after it), to make the browser do
// there what a person or a lost connection would.
var tabCloseHooks sync.Map // *Runner -> func(string)

func (r *Runner) atTabClose(point string) {
	if f, ok := tabCloseHooks.Load(r); ok {
		f.(func(string))(point)
	}
}

// pruneTabs removes the tab records proven closed longer ago than the
// retention period (ledger.DefaultTabRetention), raw target ids with them.
func (p *pass) pruneTabs() error {
	n, err := p.r.db.PruneTabs(p.ctx, p.fence(), p.r.now().Add(-ledger.DefaultTabRetention))
	if err != nil {
		return err
	}
	if n > 0 {
		p.r.log.Info("pruned tab records proven closed", "records", n, "retention", ledger.DefaultTabRetention)
	}
	return nil
}

func (r *Runner) siteNames() []string {
	var out []string
	for n := range r.sites {
		out = append(out, n)
	}
	return out
}
