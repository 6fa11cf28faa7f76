package operator

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// stateLabeler is implemented by adapters that can name a like or follow
// control's done and not-done values.
type stateLabeler interface {
	StateLabels(k kind.Kind) (done, notDone string, ok bool)
}

// clickSeen is what verifyLive knows of a submission beyond the action's
// record, when the pass that clicked verifies it.
type clickSeen struct {
	// obs is what Result read on the landed page (zero: nothing).
	obs sites.Observed
	// maySurface: the effect may surface later than the settle time (see
	// pass.land); the action's MaySurface says the same once recorded.
	maySurface bool
}

// verifyLive searches the live site for the action's exact result and
// classifies it. Observation may repeat: while the verdict is ambiguous
// only because the site's settle time has not passed, it searches again
// until it has. What the landed page read must agree with the result: its
// URL with the result found, its text and author (when read) with the
// intent; a landed page that says something else proves neither the
// effect nor its absence. A submission that may surface late is proven
// absent only after the site's bound on how late it surfaces
// (SearchResult.SurfaceWithin), counted from the settle start.
func (p *pass) verifyLive(st *siteTab, in intent, a ledger.Action, landed clickSeen, late lateClick) verify.Verdict {
	opts := verify.Options{Skew: p.r.cfg.Skew}
	executingAt := a.ExecutingAt
	vin := in.verifyIntent(st.site, executingAt)
	vin.Baseline, vin.HaveBaseline = a.Baseline, a.HaveBaseline
	vin.Seen, vin.HaveSeen = a.Seen, a.HaveSeen
	landedURL := landed.obs.URL
	if landedURL == "" {
		landedURL = a.LandedURL
	}
	if in.kind.Creates() && a.Status != ledger.Moderated {
		// A moderated action's landed link is its record: it is never
		// proven absent anyway (see recheckModerated).
		vin.LandedURL = landedURL
	}
	vin.SettleFrom = late.settleFrom
	vin.MaySurface = landed.maySurface || a.MaySurface
	settleStart := vin.SettleStart()
	landedWhy := ""
	if in.kind.Creates() {
		landedWhy = verify.CheckLandedResult(vin, landed.obs.LandedResult())
	}
	since := executingAt.Add(-p.r.cfg.Skew)
	if a.HaveBaseline {
		// Compared by URL, not time: search the same window as the baseline.
		since = time.Time{}
	}
	for attempt := 0; ; attempt++ {
		if p.ctx.Err() != nil {
			return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the pass was cancelled"}
		}
		res, err := st.site.Search(p.ctx, st.tab, sites.Query{Kind: in.performed(), Actor: in.actor, Target: in.target, Text: in.text, Since: since})
		if errors.Is(err, browser.ErrTabGone) && attempt == 0 {
			// Observation may retry: recover the tab once and look again.
			if st2, rerr := p.tabFor(in.site); rerr == nil {
				st = st2
				continue
			}
		}
		if err != nil {
			var hs *sites.HardStop
			if errors.As(err, &hs) {
				p.hardStop(string(hs.Kind))
			}
			return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the search failed: " + errorClass(err)}
		}
		opts.Settle, opts.SurfaceWithin = res.Settle, res.SurfaceWithin
		if in.kind.Creates() && st.site.Moderates(in.performed()) {
			// The item may exist, held for moderation, where no search
			// sees it: its absence is never proven, however long ago.
			vin.MaySurface, opts.SurfaceWithin = true, 0
		}
		now := p.r.now()
		var v verify.Verdict
		if in.kind.Creates() {
			// The search reads the actor's own list, whoever is signed in;
			// but an account other than the actor signed in now means the
			// click may have been carried out as that account.
			if who, err := st.site.Identity(p.ctx, st.tab); err == nil {
				if err := p.sawAccount(in.site, who); err != nil {
					return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the account seen could not be recorded: " + errorClass(err)}
				}
			}
			// The actor's other results are items browserop made: neither
			// unexplained beside this action's absence nor its result.
			known, err := p.r.db.ResultsOf(p.ctx, a.Site, a.Actor, res.Since.Add(-knownMargin), a.ID)
			if err != nil {
				return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the other actions' results could not be read: " + errorClass(err)}
			}
			vin.Known = known
			v = verify.Classify(vin, res.View(now), opts)
			switch {
			case v.Outcome == verify.Duplicate:
			case landedWhy != "":
				// Something was created, and it is not what the intent
				// predicts: neither this action's proof nor its absence.
				return verify.Verdict{Outcome: verify.Ambiguous, Reason: landedWhy}
			case v.Outcome == verify.Verified && landedURL != "" && verify.NormalizeURL(landedURL) != verify.NormalizeURL(v.URL):
				return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the landed page and the timeline disagree"}
			case v.Outcome == verify.Verified:
				if why := p.rewrittenResult(st, in, vin, res, v.URL, a.ID); why != "" {
					return verify.Verdict{Outcome: verify.Ambiguous, URLs: v.URLs, Reason: why}
				}
			}
		} else {
			// A like or follow control shows the viewer's own state: it
			// proves something only when the viewer is the actor.
			who, err := st.site.Identity(p.ctx, st.tab)
			if err != nil || who != in.actor {
				if err == nil {
					if err := p.sawAccount(in.site, who); err != nil {
						return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the account seen could not be recorded: " + errorClass(err)}
					}
				}
				p.hardStop(string(sites.StopIdentityMismatch))
				return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the control was not read as the actor"}
			}
			v = p.classifyState(st.site, in, vin, res, now, opts)
		}
		// Waiting proves nothing while the tab that clicked may still send
		// the click: one look, then a later pass.
		settled := !now.Before(settleStart.Add(res.Settle)) || late.unproven != ""
		if v.Outcome != verify.Ambiguous || settled || attempt > 200 {
			if v.Outcome == verify.Absent && late.unproven != "" {
				return verify.Verdict{Outcome: verify.Ambiguous, Reason: late.unproven}
			}
			if v.Outcome == verify.Ambiguous && in.kind.Creates() {
				v.Reason += p.heldAbsenceDetail(st, in, vin, v, a.ID)
			}
			return v
		}
		wait := min(time.Second, time.Until(settleStart.Add(res.Settle))+50*time.Millisecond)
		select {
		case <-p.ctx.Done():
			return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the pass was cancelled"}
		case <-time.After(max(wait, 100*time.Millisecond)):
		}
	}
}

func (p *pass) classifyState(site sites.Adapter, in intent, vin verify.Intent, res sites.SearchResult, now time.Time, opts verify.Options) verify.Verdict {
	lab, ok := site.(stateLabeler)
	if !ok || len(res.Items) != 1 {
		return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the control's state could not be read as one value"}
	}
	done, notDone, ok := lab.StateLabels(in.performed())
	if !ok {
		return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the site names no states for this control"}
	}
	it := res.Items[0]
	return verify.ClassifyState(vin, verify.State{Value: it.State, Done: done, NotDone: notDone, Fresh: true,
		ObservedAt: now, URL: it.Link}, opts)
}

// reconcile settles unfinished actions against the live page before any new
// mutation: an action found executing is ambiguous (its pass ended
// mid-action); an ambiguous action is searched for. Exactly one exact
// match verifies it, a definitive absence fails it, anything else leaves it
// ambiguous and stops mutations for this pass. A moderated action is
// searched for too (see recheckModerated).
func (p *pass) reconcile() error {
	acts, err := p.r.db.ListActions(p.ctx, ledger.ActionFilter{Statuses: []ledger.Status{ledger.Executing, ledger.Ambiguous, ledger.Moderated}})
	if err != nil {
		return err
	}
	for _, a := range acts {
		if a.Status == ledger.Moderated {
			if err := p.recheckModerated(a); err != nil {
				return err
			}
			continue
		}
		if a.Status == ledger.Executing {
			if a, err = p.transition(a, ledger.Change{To: ledger.Ambiguous,
				Reason: "found executing at the start of a pass: the pass that performed it ended before recording the outcome"}); err != nil {
				return err
			}
		}
		in, err := fromAction(a)
		if err != nil {
			p.problem(err.Error())
			p.hardStopPass(stopUnresolved)
			continue
		}
		st, err := p.tabFor(a.Site)
		if err != nil {
			if errors.Is(err, ledger.ErrStaleGeneration) {
				return err
			}
			p.hardStopPass("an unresolved ambiguous action: " + stopKind(err))
			continue
		}
		if err := p.useTab(st, a.TaskID); err != nil {
			return err
		}
		late, err := p.lateClick(a)
		if err != nil {
			return err
		}
		p.reconciled[a.ID] = true
		if a, err = p.settle(a, p.verifyLive(st, in, a, clickSeen{}, late), entryOf(in.origin), nil, false, reconciledNotes); err != nil {
			return err
		}
		p.sum.count(CountReconciled)
	}
	return nil
}

// recheckModerated looks for a moderated action's result in the site's
// public view: found exactly, and where the landed page said it would be
// (when it said), it is verified (the moderators let it through); not found, it stays moderated, for the operator cannot tell
// "still held" from "rejected" (a person ends it failed), and the look is
// recorded when its reason changed; two exact results stop the pass, as
// they do for any action. It never stops the pass otherwise: a held effect
// waits for the site's moderators, not for the person.
func (p *pass) recheckModerated(a ledger.Action) error {
	// A hard stop while looking (a blocker on its site's search) concerns
	// that site only: a held action never stops the pass otherwise.
	p.site = a.Site
	defer func() { p.site = "" }()
	in, err := fromAction(a)
	if err != nil {
		p.problem(err.Error())
		return nil
	}
	st, err := p.tabFor(a.Site)
	if err != nil {
		if errors.Is(err, ledger.ErrStaleGeneration) {
			return err
		}
		p.r.log.Warn("a moderated action could not be looked for", "action", a.ID, "site", a.Site, "reason", stopKind(err))
		return nil
	}
	// Never proven absent, so no late-click bound is needed: only a
	// verified verdict changes it. The URL the landed page named, when it
	// named one, must be the result found: an identical item elsewhere
	// (the person's own twin) is not this one made public.
	if err := p.useTab(st, a.TaskID); err != nil {
		return err
	}
	v := p.verifyLive(st, in, a, clickSeen{obs: sites.Observed{URL: a.CanonicalResult}}, lateClick{})
	p.reconciled[a.ID] = true
	p.sum.count(CountReconciled)
	entry := entryOf(in.origin)
	switch v.Outcome {
	case verify.Verified:
		if a, err = p.transition(a, ledger.Change{To: ledger.Verified, Result: v.URL, Reason: "verified: public after moderation: " + v.Reason}); err != nil {
			return err
		}
		p.report(a, entry, NoteReconciledVerified)
	case verify.Duplicate:
		if _, err = p.r.db.Recheck(p.ctx, p.fence(), a.ID, "held for moderation, and now more than one exact result: "+strings.Join(v.URLs, " ")); err != nil {
			return err
		}
		p.hardStopPass("more than one exact result for a moderated action")
	default:
		if _, err = p.r.db.Recheck(p.ctx, p.fence(), a.ID, "held for moderation: the site's public view does not show it yet ("+v.Reason+")"); err != nil {
			return err
		}
	}
	return nil
}

// lateClick is what reconciliation may conclude about a click whose pass
// ended before recording its outcome. The browser that pass used can
// outlive it (the person's Chrome in attach mode, a launched Chrome that
// runs on), and a click it was sent may be carried out late, after the
// pass died: a busy renderer dispatches input when it gets to it. Until
// the tab the click was sent in is proven gone, no view proves the click
// absent; once it is, the site's settle time counts from that proof, not
// from the moment the action went executing.
type lateClick struct {
	// settleFrom is when the clicking tab was proven gone (zero: no later
	// than the click itself).
	settleFrom time.Time
	// unproven, when not empty, says why absence cannot be proven in this
	// pass: the clicking tab may still be open.
	unproven string
}

// lateClick finds the tab records of the run that moved a to executing,
// for its site, and says when they were proven gone (closed with proof, or
// missing from a complete inventory). It runs after the pass reconciled
// earlier tab records (tabFor does that first), so a tab of a dead pass
// has been looked for in the browser that runs now.
func (p *pass) lateClick(a ledger.Action) (lateClick, error) {
	runID, tabs, err := p.r.db.ClickTabs(p.ctx, a.ID)
	if err != nil {
		return lateClick{}, err
	}
	if runID == "" {
		// A pass records its run before it opens any tab, so an action
		// moved to executing under a generation with no run (written by
		// hand, or by a program other than a pass) was clicked in no tab
		// of browserop's.
		return lateClick{}, nil
	}
	if runID == p.run.ID {
		return lateClick{}, nil // this pass's own click, verified by this pass
	}
	binding := browser.BindingHash(a.Site, runID)
	var late lateClick
	for _, t := range tabs {
		// A tab handed to the person was prepared for a confirmation and
		// given up before anything of it went executing; the pass went on
		// in a new tab. It is the person's, stays open, and clicked
		// nothing of browserop's.
		if t.BindingHash != binding || t.State == ledger.TabHandoff {
			continue
		}
		switch t.State {
		case ledger.TabClosedVerified, ledger.TabMissing:
			if t.UpdatedAt.After(late.settleFrom) {
				late.settleFrom = t.UpdatedAt
			}
		default:
			return lateClick{unproven: fmt.Sprintf("the tab its pass clicked in (record %d, %s) is not proven gone: a browser that outlived that pass may still carry out the click", t.ID, t.State)}, nil
		}
	}
	return late, nil
}

// sawAccount records that who was seen signed in on site: every unsettled
// action there whose actor is someone else may have been carried out as
// who, and notes it. An error means a sighting may be missing from the
// record: the caller must not go on to judge absence on that site.
func (p *pass) sawAccount(site, who string) error {
	if who == "" {
		return nil
	}
	acts, err := p.r.db.ListActions(p.ctx, ledger.ActionFilter{Statuses: []ledger.Status{ledger.Executing, ledger.Ambiguous}})
	if err != nil {
		return fmt.Errorf("list unsettled actions: %w", err)
	}
	for _, a := range acts {
		if a.Site != site || a.Actor == who || slices.Contains(a.OtherAccounts, who) {
			continue
		}
		others := append(slices.Clone(a.OtherAccounts), who)
		slices.Sort(others)
		if _, err := p.r.db.NoteOtherAccount(p.ctx, p.fence(), a.ID, who, "cannot prove the outcome: "+otherAccountsReason(a.Actor, others)); err != nil {
			return err
		}
		p.r.log.Warn("another account is signed in while an action is unsettled; its effect may be on that account",
			"action", a.ID, "actor", a.Actor, "account", who)
	}
	return nil
}
