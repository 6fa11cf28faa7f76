package operator

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// A handed-off intent may already be done (docs/operator.md,
// "Confirmations and the handed-off tab"). An action the person confirms
// first is prepared in a tab that is then theirs: filled, submittable, left
// open. They may press the site's own button in it before or after they
// answer, so once they have answered, and before anything is published or
// the action ends declined:
//
//   - the handed-off tab is closed with proof (closed_verified, or missing
//     from a complete inventory), so that there are never two submittable
//     copies of one intent; one that cannot be (it left the prepared page
//     other than by a submission, no complete inventory, a close that is
//     not proven) holds the action, which stays planned and says why;
//   - then the site is searched the way verification searches it, with
//     the baseline read before the tab was prepared, from when the handoff
//     began, and settled from the tab's close proof (as a late click is):
//     an identical item that is not in that baseline is the intent's
//     effect and verifies it (confirmed or declined: never failed while it
//     is on the site); a proven absence lets a confirmed action be
//     published in a new tab, with that same baseline (a fresh one would
//     count the person's post as one that was there before), and a declined
//     one end failed; anything else makes it ambiguous, for a person.

// afterHandoff carries out the rules above for m's action, whose
// confirmation c the person answered. It reports whether the action's
// part in this pass ended here (held, verified, ambiguous, declined);
// when it did not, the action is confirmed, absent, and is performed on.
func (p *pass) afterHandoff(m *mutation, c ledger.Confirmation) (bool, error) {
	declined := c.State == ledger.ConfirmDeclined
	if ended, err := p.takeTab(m); ended || err != nil {
		return true, err
	}
	gone, landed, held, err := p.retireHandoff(m, c)
	if err != nil {
		return true, err
	}
	if held != "" {
		return true, p.holdHandoff(m, c, held, declined)
	}
	if c.Held != "" {
		if _, err := p.r.db.HoldConfirmation(p.ctx, p.fence(), m.a.ID, ""); err != nil {
			return true, err
		}
	}
	h := handoffOf(c)
	v := p.lookSinceHandoff(m, h, gone, landed)
	if v.Outcome != verify.Verified && (p.ctx.Err() != nil || p.stoppedFor(m.in.site) != "") {
		// The look was cut short (the pass is ending, or a hard stop
		// came while it searched): it proves nothing, and nothing of the
		// action has been done; a later pass looks again.
		return true, p.holdHandoff(m, c, "the look for what the handed-off tab may have published was cut short ("+v.Reason+"): a later pass looks again", declined)
	}
	switch {
	case v.Outcome == verify.Verified:
		return true, p.verifyHandedOff(m, c, h, v, declined)
	case v.Outcome == verify.Absent && declined:
		var err error
		m.a, err = p.endFailed(m.a, m.entry, ledger.Abandoned, "declined by "+c.By+"; nothing of it is on the site", NoteDeclined)
		return true, err
	case v.Outcome == verify.Absent:
		m.handoff = &h
		return false, nil
	}
	return true, p.handedOffAmbiguous(m, c, h, v, declined, landed.URL)
}

// handoffOf is c's recorded handoff; for a confirmation asked before the
// ledger recorded handoffs, one with no baseline, begun when the
// confirmation was asked.
func handoffOf(c ledger.Confirmation) ledger.Handoff {
	if c.Handoff != nil {
		return *c.Handoff
	}
	return ledger.Handoff{At: c.CreatedAt}
}

// retireHandoff closes with proof the tab handed to the person for m's
// action (the one c names; for a confirmation that names none, the task's
// handed-off tabs on the action's site). It returns when the last of
// them was proven gone, what Result read on a tab a submission had taken
// to its landing (zero: nothing), or why the action is held.
func (p *pass) retireHandoff(m *mutation, c ledger.Confirmation) (gone time.Time, landed sites.Observed, held string, err error) {
	var recs []ledger.Tab
	page := ""
	if c.Handoff != nil {
		rec, err := p.r.db.GetTab(p.ctx, c.Handoff.TabID)
		if err != nil {
			return time.Time{}, landed, "", err
		}
		recs, page = []ledger.Tab{rec}, c.Handoff.PageURL
	} else {
		all, err := p.r.db.ListTabs(p.ctx, m.a.TaskID)
		if err != nil {
			return time.Time{}, landed, "", err
		}
		// Every record bound to the task is a tab handed to the person;
		// which of them was this action's is not recorded, so each on
		// the action's site is retired (closing another intent's copy
		// costs that copy, never a second effect).
		for _, rec := range all {
			if rec.BindingHash == browser.BindingHash(m.in.site, rec.RunID) {
				recs = append(recs, rec)
			}
		}
		if len(recs) == 0 {
			gone = p.r.now() // no tab to wait for: settle from now
		}
	}
	for _, rec := range recs {
		at, obs, why, err := p.retireHandoffTab(m, rec, page)
		if err != nil || why != "" {
			return time.Time{}, landed, why, err
		}
		if at.After(gone) {
			gone = at
		}
		if obs.URL != "" || len(obs.Read) > 0 {
			landed = obs
		}
	}
	return gone, landed, "", nil
}

// retireHandoffTab closes one handed-off tab with proof and returns when it
// was proven gone. A record already closed_verified or missing was proven
// gone when it was updated. A tab still on the prepared page is closed; one
// a form's response took elsewhere (the person pressed the site's button:
// its landing is read first) too; one that went elsewhere any other way is
// the person's, and stays open: the action is held.
func (p *pass) retireHandoffTab(m *mutation, rec ledger.Tab, page string) (time.Time, sites.Observed, string, error) {
	var landed sites.Observed
	if rec.State == ledger.TabClosedVerified || rec.State == ledger.TabMissing {
		return rec.UpdatedAt, landed, "", nil
	}
	b, err := p.r.getBrowser(p.ctx)
	if err != nil {
		return time.Time{}, landed, "there is no browser to prove the tab handed over for it closed (" + errorClass(err) + "): a later pass looks again", nil
	}
	id := browser.TargetID(rec.TargetID)
	s := sight(p.ctx, b, id)
	if !s.complete() {
		return time.Time{}, landed, "the browser gave no complete list of its tabs, so the tab handed over for it may still be open: a later pass looks again", nil
	}
	i := slices.IndexFunc(s.ctl.Targets, func(t browser.Target) bool { return rec.TargetID != "" && t.ID == id })
	if i < 0 {
		if s.has(id) {
			return time.Time{}, landed, "the tab handed over for it is still in the person's windows: a later pass looks again", nil
		}
		if _, err := p.r.db.RecordTabFacts(p.ctx, p.fence(), rec.ID, rec.Epoch, s.fact(ledger.FactInventoryReconciled, id)); err != nil {
			return time.Time{}, landed, "", err
		}
		return p.recordHandoffTab(rec, ledger.TabMissing, landed)
	}
	url := s.ctl.Targets[i].URL
	onPage := page != "" && browser.LooseURL(url) == page
	if b.Adopt(p.ctx, id) != nil {
		return p.recordHandoffTab(rec, ledger.TabClosureUnverified, landed)
	}
	if !onPage {
		submitted := false
		if slices.Contains(m.site.Origins(), browser.Origin(url)) {
			submitted, landed = p.readHandoffLanding(b, id, m)
		}
		if !submitted {
			b.Disown(id) // the person's: it keeps a launched Chrome running
			return time.Time{}, landed, "the tab handed over for it is on another page now: it is the person's and stays open, " +
				"and while it may still hold the prepared form nothing of it is done; close that tab and the next pass goes on", nil
		}
	}
	return p.recordHandoffTab(rec, p.closeTargetWithProof(b, p.ctx, &rec, id), landed)
}

// readHandoffLanding reports whether a form's response took the handed-off
// tab where it is (the person pressed the site's button in it), and what
// the adapter's Result reads there. The tab stays adopted when it says so.
func (p *pass) readHandoffLanding(b *browser.Browser, id browser.TargetID, m *mutation) (bool, sites.Observed) {
	tab, err := b.AttachOwned(p.ctx, id)
	if err != nil {
		return false, sites.Observed{}
	}
	defer tab.Release()
	// The person's tab: a deadline, never armTab (nothing here clicks,
	// and a page a person sees is never torn down).
	tab.SetActionTimeout(p.r.cfg.ActionTimeout)
	if tr, err := tab.Transition(p.ctx); err != nil || tr != "form_submit" {
		return false, sites.Observed{}
	}
	obs, err := m.site.Result(p.ctx, tab, m.si)
	if err != nil {
		return true, sites.Observed{}
	}
	return true, obs
}

// recordHandoffTab records what closing a handed-off tab proved, and
// returns when it was proven gone, or why the action is held.
func (p *pass) recordHandoffTab(rec ledger.Tab, state ledger.TabState, landed sites.Observed) (time.Time, sites.Observed, string, error) {
	rec, err := p.r.db.UpdateTab(p.ctx, p.fence(), rec.ID, ledger.TabChange{State: state})
	if err != nil {
		return time.Time{}, landed, "", err
	}
	p.sum.count(tabsCount(state))
	p.r.log.Info("the tab handed to the person is retired", "run", p.run.ID, "record", rec.ID, "state", state)
	if state != ledger.TabClosedVerified && state != ledger.TabMissing {
		return time.Time{}, landed, "the tab handed over for it could not be proven closed: a later pass tries again (closing it yourself does too)", nil
	}
	return rec.UpdatedAt, landed, "", nil
}

// lookSinceHandoff searches the site for the action's effect as
// verification does, as if it had gone executing when the handoff began
// (h.At), with the baseline read before the tab was prepared, and settled
// from gone (the handed-off tab's close proof). What the tab's landing
// read must agree with it; a landing that shows a result the search does
// not proves neither the effect nor its absence.
func (p *pass) lookSinceHandoff(m *mutation, h ledger.Handoff, gone time.Time, landed sites.Observed) verify.Verdict {
	a := m.a
	a.ExecutingAt, a.Baseline, a.HaveBaseline, a.MaySurface = h.At, h.Baseline, h.HaveBaseline, false
	a.Seen, a.HaveSeen = h.Seen, h.HaveSeen
	v := p.verifyLive(m.st, m.in, a, clickSeen{obs: landed}, lateClick{settleFrom: gone})
	if v.Outcome == verify.Absent && landed.URL != "" {
		return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the handed-off tab landed on a result (" + landed.URL + ") that the search does not show"}
	}
	return v
}

// beginHandedOff moves the action to executing for an effect the
// person's click in the handed-off tab may have made (ledger.BeginHandedOff:
// dated from the handoff, with its baseline). budget says why it could not
// (the budget or the task's bound is spent, the clock is behind), which
// holds the action; err is the ledger's.
func (p *pass) beginHandedOff(m *mutation, h ledger.Handoff, reason string) (budget string, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 30*time.Second)
	defer cancel()
	a, err := p.r.db.BeginHandedOff(ctx, p.fence(), m.a.ID, ledger.Change{To: ledger.Executing, Reason: reason, Budget: p.r.policy,
		Baseline: h.Baseline, HaveBaseline: h.HaveBaseline, Seen: h.Seen, HaveSeen: h.HaveSeen})
	switch {
	case errors.Is(err, budgets.ErrExhausted):
		return "its budget is spent now (" + err.Error() + "); it is recorded once the budget allows", nil
	case errors.Is(err, ledger.ErrClockBehind):
		p.hardStopPass("the clock is behind recorded effects")
		return "the clock is behind recorded effects", nil
	case err != nil:
		return "", err
	}
	m.a = a
	return "", nil
}

// verifyHandedOff records as verified an action whose effect the look
// since the handoff found: the person published it from the handed-off
// tab (before declining, for a declined one). Nothing is published.
func (p *pass) verifyHandedOff(m *mutation, c ledger.Confirmation, h ledger.Handoff, v verify.Verdict, declined bool) error {
	why := "published from the handed-off tab: the person submitted it there"
	if declined {
		why = "published from the handed-off tab: the person submitted it there before declining"
	}
	url := v.URL
	if url == "" {
		url = verify.NormalizeURL(m.site.CanonicalFor(m.in.performed(), m.in.target))
	}
	spent, err := p.beginHandedOff(m, h, "found on the site after the handoff ("+url+"): "+why)
	if err != nil {
		return err
	}
	if spent != "" {
		return p.holdHandoff(m, c, why+" ("+url+"), but "+spent, declined)
	}
	if m.a, err = p.transition(m.a, ledger.Change{To: ledger.Verified, Result: url, Reason: "verified: " + why + "; " + v.Reason}); err != nil {
		return err
	}
	p.reportWith(m.a, m.entry, NoteVerifiedFromHandoff, "verified, not published again: "+why)
	return nil
}

// handedOffAmbiguous records as ambiguous an action the look since the
// handoff could neither find nor prove absent: the person may have
// published it from the handed-off tab. A person settles it.
func (p *pass) handedOffAmbiguous(m *mutation, c ledger.Confirmation, h ledger.Handoff, v verify.Verdict, declined bool, landedURL string) error {
	what := "the person may have published it from the tab handed to them"
	if declined {
		what = "declined by " + c.By + ", but " + what
	}
	spent, err := p.beginHandedOff(m, h, "looked for after the handoff: "+what)
	if err != nil {
		return err
	}
	if spent != "" {
		return p.holdHandoff(m, c, what+", and "+spent, declined)
	}
	if landedURL != "" {
		// A result the handed-off tab landed on stands against any later
		// "absent", also in the passes that reconcile this action.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 30*time.Second)
		m.a, err = p.r.db.NoteLanded(ctx, p.fence(), m.a.ID, verify.NormalizeURL(landedURL))
		cancel()
		if err != nil {
			return err
		}
	}
	v.Reason = what + ": " + v.Reason
	m.a, err = p.settle(m.a, v, m.entry, nil, false, performedNotes)
	return err
}

// holdHandoff keeps an answered action planned, for why, recorded on its
// confirmation (the person reads it with the task) and reported.
func (p *pass) holdHandoff(m *mutation, c ledger.Confirmation, why string, declined bool) error {
	reason := "confirmed, not published yet: " + why
	if declined {
		reason = "declined, not ended yet: " + why
	}
	if c.Held != reason {
		// Recorded even when the pass is being cancelled, as a
		// transition is.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 30*time.Second)
		defer cancel()
		if _, err := p.r.db.HoldConfirmation(ctx, p.fence(), m.a.ID, reason); err != nil {
			return err
		}
	}
	p.reportWith(m.a, m.entry, NoteHandoffHeld, reason)
	return nil
}

// reportWith is report with a reason of its own, also for a verified
// action.
func (p *pass) reportWith(a ledger.Action, entry string, note Note, reason string) {
	rep := ActionReport{ActionID: a.ID, Entry: entry, Type: a.Type, Site: a.Site, Status: a.Status, Result: a.CanonicalResult, Note: note, Reason: reason}
	p.sum.Actions = append(p.sum.Actions, rep)
	p.sum.count(Count(note))
	p.logAction(rep)
}

// keepHandoffBaseline gives a confirmed action whose handoff proved its
// effect absent the baseline read before its tab was prepared, in place of
// the one the baseline phase read now: a post the person made in the
// handed-off tab that surfaced since would be in that one, as if it had
// been there before, and hide this action's double.
func (m *mutation) keepHandoffBaseline() {
	if m.handoff != nil {
		m.baseline, m.haveBaseline = m.handoff.Baseline, m.handoff.HaveBaseline
		m.seen, m.haveSeen = m.handoff.Seen, m.handoff.HaveSeen
	}
}

// handoffRecord is what handToPerson records with the confirmation it
// asks for: the tab, the prepared page, when the handoff began, and the
// baseline read before the tab was prepared.
func (m *mutation) handoffRecord(now time.Time) ledger.Handoff {
	began := m.handoffFrom
	if began.IsZero() {
		began = now
	}
	return ledger.Handoff{TabID: m.st.rec.ID, PageURL: browser.LooseURL(m.before), At: began,
		Baseline: m.baseline, HaveBaseline: m.haveBaseline, Seen: m.seen, HaveSeen: m.haveSeen}
}

// reconcileHandoffTabs follows the tabs handed to the person that no
// answer retired yet (record handoff: a confirmation still pending, or a
// task cancelled while it waited), against complete inventories of both
// surfaces, and the record follows: gone from both, the person closed it,
// and it is missing (the absence a fact of its epoch; retireHandoffTab
// then takes it as proven gone); on another origin than its record's, its
// record takes that origin; still there, it is left as it is (whether it
// is still on the prepared page is what retireHandoffTab asks, once the
// person answered). Nothing is attached to, filled or closed: the tab is the
// person's. Nothing is concluded from an incomplete inventory.
func (p *pass) reconcileHandoffTabs(b *browser.Browser) error {
	recs, err := p.r.db.ListTabs(p.ctx, "", ledger.TabHandoff)
	if err != nil || len(recs) == 0 {
		return err
	}
	var ids []browser.TargetID
	for _, rec := range recs {
		if rec.TargetID != "" {
			ids = append(ids, browser.TargetID(rec.TargetID))
		}
	}
	s := sight(p.ctx, b, ids...)
	if !s.complete() {
		p.r.log.Warn("no complete tab inventory; the handed-off tabs' records stay as they are", "records", len(recs))
		return nil
	}
	for _, rec := range recs {
		id := browser.TargetID(rec.TargetID)
		if rec.TargetID == "" {
			continue
		}
		i := slices.IndexFunc(s.ctl.Targets, func(t browser.Target) bool { return t.ID == id })
		switch {
		case i < 0 && s.has(id):
			// In the person's windows only: not proven gone.
		case i < 0:
			if _, err := p.r.db.RecordTabFacts(p.ctx, p.fence(), rec.ID, rec.Epoch, s.fact(ledger.FactInventoryReconciled, id)); err != nil {
				return err
			}
			if _, err := p.r.db.UpdateTab(p.ctx, p.fence(), rec.ID, ledger.TabChange{State: ledger.TabMissing}); err != nil {
				return err
			}
			p.sum.count(CountHandoffTabsGone)
			p.r.log.Info("a tab handed to the person is gone: they closed it", "record", rec.ID)
		default:
			// A record keeps its site's origin; a tab on no web origin
			// (about:blank, a browser page) is recorded by its address
			// without query or fragment.
			at := browser.Origin(s.ctl.Targets[i].URL)
			if at == "" {
				at = browser.RedactURL(s.ctl.Targets[i].URL)
			}
			if browser.LooseURL(at) == browser.LooseURL(rec.URL) {
				continue
			}
			if _, err := p.r.db.UpdateTab(p.ctx, p.fence(), rec.ID, ledger.TabChange{URL: at}); err != nil {
				return err
			}
			p.sum.count(CountHandoffTabsMoved)
			p.r.log.Info("a tab handed to the person is on another origin", "record", rec.ID, "origin", at)
		}
	}
	return nil
}
