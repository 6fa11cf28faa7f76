package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// transition moves an action under the pass's fence.
func (p *pass) transition(a ledger.Action, c ledger.Change) (ledger.Action, error) {
	if c.To == ledger.Executing || c.To == ledger.Verified {
		c.Budget = p.r.policy
	}
	// A transition is recorded even when the pass is being cancelled: the
	// outcome of a mutation must never be lost for want of a context.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 30*time.Second)
	defer cancel()
	return p.r.db.Transition(ctx, p.fence(), a.ID, c)
}

// process carries one intent through reserve, preflight, prepare, perform
// once, verify and budget commit. It returns the action as it ended. Only
// failures of the pass itself (the ledger, a lost lease) are errors.
func (p *pass) process(in intent, entry string, late bool) (ledger.Action, error) {
	li := in.ledgerIntent(p.run.ID)
	p.site = in.site // a hard stop from here on concerns this site
	defer func() { p.site = "" }()
	if stopped := p.stoppedFor(in.site); stopped != "" || p.r.draining.Load() {
		why := "the pass stopped: " + stopped
		if stopped == "" {
			why = "browserop is shutting down"
		}
		p.sum.count(Count(NoteHeld))
		p.sum.Actions = append(p.sum.Actions, ActionReport{Entry: entry, Type: in.kind, Status: StatusNotAttempted, Reason: why})
		if stopped != "" {
			return ledger.Action{}, p.recordStopOnReserved(li, stopped)
		}
		return ledger.Action{}, nil
	}
	key, err := li.Key()
	if err != nil {
		return ledger.Action{}, err
	}
	_, err = p.r.db.ActionByKey(p.ctx, key)
	switch {
	case err == nil:
	case errors.Is(err, ledger.ErrNotFound):
		if !late {
			// Check before acting; the authoritative check runs again when
			// the action goes executing.
			if err := p.r.db.CheckBudget(p.ctx, p.r.policy, in.format); errors.Is(err, budgets.ErrExhausted) {
				p.sum.count(CountBudgetSkips)
				p.sum.Actions = append(p.sum.Actions, ActionReport{Entry: entry, Type: in.kind, Status: StatusBudgetSkip, Reason: err.Error()})
				return ledger.Action{}, nil
			} else if err != nil {
				return ledger.Action{}, err
			}
		}
	default:
		return ledger.Action{}, err
	}
	a, reserved, err := p.r.db.Reserve(p.ctx, p.fence(), li)
	if err != nil {
		return ledger.Action{}, err
	}
	if reserved {
		crashPoint("after-reserve")
	} else {
		// Reserve returned the action already recorded under the key.
		switch a.Status {
		case ledger.Verified:
			if !p.reconciled[a.ID] { // reported once, as reconciled, in this pass
				p.report(a, entry, NoteAlreadyVerified)
			}
			return a, nil
		case ledger.Failed:
			if !a.Replannable(p.r.cfg.MaxAttempts) || late {
				p.report(a, entry, NoteFailedBefore)
				return a, nil
			}
			if a, err = p.transition(a, ledger.Change{To: ledger.Planned, Reason: "replanned after a definitive failure"}); err != nil {
				return a, err
			}
		case ledger.Executing, ledger.Ambiguous:
			// Reconciliation runs first; one left means it could not be settled.
			p.hardStopPass(stopUnresolved)
			p.report(a, entry, NoteAmbiguousWaiting)
			return a, nil
		case ledger.Moderated:
			// Performed, held by the site's moderators: never performed
			// again, and nothing for a person to settle, so the pass goes
			// on. Reconciliation verifies it once it is public.
			p.report(a, entry, NoteAwaitingModeration)
			return a, nil
		}
	}
	if late {
		return p.endFailed(a, entry, ledger.Abandoned, fmt.Sprintf("missed: due more than %s ago; not published late", p.r.cfg.Grace), NoteMissed)
	}
	return p.perform(in, a, entry)
}

// perform carries a planned action through the phases of docs/operator.md
// ("One pass"), in order. A phase that ends the action's part in this
// pass (it failed, waits for a person, or a hard stop holds it) reports it
// and says so; the action is returned as it ended.
func (p *pass) perform(in intent, a ledger.Action, entry string) (ledger.Action, error) {
	m := &mutation{in: in, a: a, entry: entry, si: in.sitesIntent()}
	for _, phase := range []func(*mutation) (ended bool, err error){
		p.authorize,        // the task still may, read afresh
		p.confirmationGate, // a capability the person confirms first
		p.takeTab,          // the pass's owned tab on the site
		p.baseline,         // the identical items already there
		p.preflight,        // origin, blockers, identity, ownership, target
		p.prepare,          // the exact payload, read back
		p.handToPerson,     // prepared for the person to confirm
		p.goExecuting,      // executing on disk; lease and authority again
		p.click,            // the one click
		p.land,             // where the submission landed
		p.verifyAndSettle,  // the live site's verdict, recorded
	} {
		if ended, err := phase(m); ended || err != nil {
			return m.a, err
		}
	}
	return m.a, nil
}

// mutation is one action being performed: what its phases learn and hand
// on.
type mutation struct {
	in    intent
	a     ledger.Action // as it is now
	entry string        // the entry it is reported under
	si    sites.Intent
	// confirm: the person reviews the prepared action before its click.
	confirm bool
	st      *siteTab
	site    sites.Adapter
	// baseline holds the identical items on the site before anything was
	// prepared (haveBaseline: it was read).
	baseline     []string
	haveBaseline bool
	// seen holds every item of the actor's the same search showed, in page
	// order (haveSeen: it was complete): docs/design.md invariant 12.
	seen      []string
	haveSeen  bool
	tab       *browser.Tab // the tab preflight checked: the one clicked
	before    string       // the page the submission starts from
	submitErr error        // what the click returned
	// landed is what Result read on the page the submission landed on
	// (zero when the click failed or Result did).
	landed     sites.Observed
	maySurface bool // see settle

	// handoffFrom is when the handoff of an action the person confirms
	// first began (before its baseline was read). handoff is the handoff
	// of a confirmed action whose effect was proven absent since (see
	// handoff.go).
	handoffFrom time.Time
	handoff     *ledger.Handoff
}

// authorize refuses an action the task may no longer do (see
// refuseOutsideAuthority), before anything is prepared.
func (p *pass) authorize(m *mutation) (bool, error) {
	return p.refuseOutsideAuthority(&m.a, m.in, m.entry)
}

// confirmationGate holds an action whose capability the contract asks the
// person to confirm: pending, it waits; answered, its handed-off tab may
// already have done it (afterHandoff: the tab is closed with proof and the
// site looked at first), and then, declined, it ends abandoned, confirmed,
// it is performed like any other; not asked yet, it is prepared and handed
// to the person (handToPerson).
func (p *pass) confirmationGate(m *mutation) (bool, error) {
	if !slices.Contains(m.in.task.Contract.Confirm, m.in.kind.Capability()) {
		return false, nil
	}
	c, err := p.r.db.GetConfirmation(p.ctx, m.a.ID)
	switch {
	case err == nil && c.State == ledger.ConfirmPending:
		p.report(m.a, m.entry, NoteNeedsConfirmation)
		return true, nil
	case err == nil:
		return p.afterHandoff(m, c)
	case !errors.Is(err, ledger.ErrNotFound):
		return true, err
	}
	m.confirm, m.handoffFrom = true, p.r.now()
	return false, nil
}

// takeTab takes the pass's owned tab on the action's site; a failure is a
// hard stop before anything was done.
func (p *pass) takeTab(m *mutation) (bool, error) {
	st, err := p.tabFor(m.in.site)
	if err != nil {
		return true, p.stopOn(err, m.a, m.entry)
	}
	m.st, m.site = st, st.site
	return false, p.useTab(st, m.a.TaskID)
}

// useTab records that an action of task taskID runs in st's tab record
// (ledger.UseTab): the task's state lists the records its actions used.
func (p *pass) useTab(st *siteTab, taskID string) error {
	return p.r.db.UseTab(p.ctx, p.fence(), taskID, st.rec.ID)
}

// baseline reads, before anything is prepared, the identical items already
// on the site: they are never this action's result, so verification can
// tell the result by URL instead of trusting the site's clock to agree
// with ours. A search that fails holds the action (a stop for the pass,
// retried by the next): without the baseline an identical item would be
// told from the result by the clocks alone, and a clock ahead of the
// site's makes the committed result an older item and the action absent
// (torture seed 264, which a baseline search timing out on a loaded
// machine reopened). A view the search reads incomplete leaves no
// baseline, as before: the verdict then cannot rest on absence either.
func (p *pass) baseline(m *mutation) (bool, error) {
	if !m.in.kind.Creates() {
		return false, nil
	}
	res, err := m.site.Search(p.ctx, m.st.tab, sites.Query{Kind: m.in.performed(), Actor: m.in.actor, Target: m.in.target, Text: m.in.text})
	var hs *sites.HardStop
	switch {
	case err == nil:
		now := p.r.now()
		vin, view := m.in.verifyIntent(m.site, now), res.View(now)
		m.baseline, m.haveBaseline = verify.BaselineOf(vin, view)
		m.seen, m.haveSeen = verify.SeenOf(vin, view)
	case errors.As(err, &hs):
		return true, p.stopOn(err, m.a, m.entry)
	default:
		return true, p.stopOn(fmt.Errorf("the search for identical items before the click failed: %w", err), m.a, m.entry)
	}
	return false, nil
}

// preflight opens the action's page and checks it before every mutation:
// origin, no blocker screen, signed in as the actor, browserop owns the
// tab, the target resolved to itself. It only observes, so a tab that
// disappeared (closed by the person) is recovered and it runs again, once.
// Any failure is a hard stop.
func (p *pass) preflight(m *mutation) (bool, error) {
	for attempt := 0; ; attempt++ {
		m.tab = m.st.tab
		status, err := m.site.Open(p.ctx, m.tab, m.si)
		if err == nil {
			m.before, err = sites.PreflightURL(p.ctx, m.site, m.tab, m.in.actor, status)
		}
		if err == nil {
			break
		}
		if attempt == 0 && errors.Is(err, browser.ErrTabGone) {
			if m.st, err = p.tabFor(m.in.site); err == nil {
				if err := p.useTab(m.st, m.a.TaskID); err != nil {
					return true, err
				}
				continue
			}
		}
		if nerr := p.noteBlocker(m.st, err); nerr != nil {
			return true, nerr
		}
		return true, p.stopOn(err, m.a, m.entry)
	}
	b, err := p.r.getBrowser(p.ctx)
	if err != nil || !b.Owns(m.tab.ID()) {
		return true, p.stopOn(&sites.HardStop{Kind: "ownership", Detail: "browserop no longer owns the tab"}, m.a, m.entry)
	}
	if m.in.target != "" && m.in.performed() != kind.Post || m.site.OpensPerIntent(m.in.performed()) {
		// Compared in the kind's canonical form: a site that drops a
		// tracking parameter on the way still opened the target (or the
		// page the action opens for it, named by the target's parts).
		opened, err := m.site.OpenURL(m.si)
		if err != nil {
			return true, p.stopOn(err, m.a, m.entry)
		}
		if k := m.in.performed(); browser.LooseURL(m.site.CanonicalFor(k, m.before)) != browser.LooseURL(m.site.CanonicalFor(k, opened)) {
			return true, p.stopOn(&sites.HardStop{Kind: sites.StopTarget, Detail: "the target did not resolve to the intended page"}, m.a, m.entry)
		}
	}
	return false, nil
}

// prepare readies every kind for its one committing click (site.Fill):
// it fills the exact payload of an action that creates an item and reads
// it back, and runs the steps the site declares before the click (a like's
// or a follow's too). A mismatch, or a step that failed, fails the action
// definitively: nothing was sent; so does a media upload that failed or
// did not finish (upload_failed). Any other error is a hard stop: among
// them a text field holding what browserop did not type there
// (sites.StopFieldNotOurs), left as it is, its provenance recorded in the
// ledger for this action, tab record and epoch (fieldLedger): the action
// stays planned and its site waits for a person.
func (p *pass) prepare(m *mutation) (bool, error) {
	si := m.si
	si.Provenance = p.fieldLedger(m)
	// On disk before anything is typed or changed: the tab is no probe
	// any more, and closes only once this action is verified (cleanup).
	if err := p.r.db.RecordTabUse(p.ctx, p.fence(), m.st.rec.ID, m.st.rec.Epoch, m.a.ID); err != nil {
		return true, err
	}
	_, err := m.site.Fill(p.ctx, m.tab, si)
	nothing := nothingDone(m.site, m.in.performed())
	switch {
	case errors.Is(err, sites.ErrSentBeforeClick):
		return true, p.sentBeforeClick(m, err)
	case errors.Is(err, sites.ErrReadBackMismatch):
		m.a, err = p.endFailed(m.a, m.entry, ledger.Definitive,
			"the editor's read-back differs from the intended text; "+nothing, NoteReadBackMismatch)
		return true, err
	case errors.Is(err, sites.ErrUploadFailed):
		reason, words := preparationFailed(err, sites.ErrUploadFailed, "a media upload failed", nothing)
		m.a, err = p.endFailedWith(m.a, m.entry, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: reason, SiteWords: words}, NoteUploadFailed)
		return true, err
	case errors.Is(err, sites.ErrStepFailed):
		reason, words := preparationFailed(err, sites.ErrStepFailed, "a step before the click failed", nothing)
		m.a, err = p.endFailedWith(m.a, m.entry, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: reason, SiteWords: words}, NoteStepFailed)
		return true, err
	case err != nil:
		return true, p.stopOn(err, m.a, m.entry)
	}
	if len(m.in.media) > 0 {
		// Uploaded (the site may keep the files in its library), not
		// published: a crash here leaves a planned action, prepared again
		// by the next pass.
		crashPoint("after-upload")
	}
	return false, nil
}

// sentBeforeClick ends an action whose preparation saw the page send what
// could carry its submission (sites.ErrSentBeforeClick: an adapter's step
// may have submitted it): nothing more is clicked, and it is not failed
// either, for a later pass would prepare it again. It goes to executing,
// with the baseline read before anything was prepared, whatever its budget
// says (the effect may already be there), and on to verification as a
// click whose outcome is unknown: verified when the site shows it,
// ambiguous and reconciled otherwise. The task's authority is not asked
// again: nothing more is sent.
func (p *pass) sentBeforeClick(m *mutation, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 30*time.Second)
	next, err := p.r.db.Transition(ctx, p.fence(), m.a.ID, ledger.Change{To: ledger.Executing,
		Reason:   "a step before the committing click may have sent it; the click was not sent",
		Baseline: m.baseline, HaveBaseline: m.haveBaseline, Seen: m.seen, HaveSeen: m.haveSeen})
	cancel()
	if errors.Is(err, ledger.ErrSideEffectBound) {
		// The task's bound leaves no room for it, yet it may be done:
		// settled, never prepared again, for a person to look at.
		m.a, err = p.endFailedWith(m.a, m.entry, ledger.Change{To: ledger.Failed, Class: ledger.Abandoned,
			Reason:    "a step before the committing click may have sent it (the click was not sent), and the task's side-effect bound leaves no room to verify it: check the site",
			SiteWords: printable(errcode.After(cause, sites.ErrSentBeforeClick))}, NoteStepFailed)
		return err
	}
	if err != nil {
		return err
	}
	m.a = next
	crashPoint("after-executing")
	m.submitErr = fmt.Errorf("%w: %v", sites.ErrOutcomeUnknown, cause)
	// Sent at some moment of the preparation: it may surface later than
	// a search right away can see.
	m.maySurface = true
	if _, err := p.land(m); err != nil {
		return err
	}
	_, err = p.verifyAndSettle(m)
	return err
}

// preparationFailed is the reason of an action whose preparation failed
// with err (wrapping sentinel): what, and what was not done (nothingDone);
// and, apart, the adapter's detail (control characters escaped), which may
// hold the page's words (a site's upload error, a step's message): the
// person's only (ledger.Change.SiteWords).
func preparationFailed(err, sentinel error, what, nothing string) (reason, siteWords string) {
	if detail := errcode.After(err, sentinel); detail != err.Error() {
		siteWords = printable(detail)
	}
	return what + "; " + nothing, siteWords
}

// nothingDone says what a failure before the click left undone: nothing
// was submitted; on a site whose editor saves drafts by itself
// (actions.KIND.drafts), nothing was published, but a draft may be kept.
func nothingDone(site sites.Adapter, k kind.Kind) string {
	if site.KeepsDrafts(k) {
		return "nothing was published (the site may keep a draft of it)"
	}
	return "nothing was submitted"
}

// handToPerson ends here an action the person confirms first. Prepared and
// read back, it waits in this tab, which is theirs now and stays open; the
// confirmation records the handoff (the tab, the page, when it began, the
// baseline). Once they answer, a later pass retires that tab and looks for
// what it may have published (afterHandoff), then goes on, with a fresh
// preflight in a tab of its own and the handoff's baseline.
func (p *pass) handToPerson(m *mutation) (bool, error) {
	if !m.confirm {
		m.keepHandoffBaseline()
		return false, nil
	}
	if _, err := p.r.db.RequestHandoffConfirmation(p.ctx, p.fence(), m.a.ID, m.handoffRecord(p.r.now())); err != nil {
		return true, err
	}
	vis, err := p.handOff(m.in.site, m.in.task.ID)
	if err != nil {
		return true, err
	}
	p.add(ActionReport{ActionID: m.a.ID, Entry: m.entry, Type: m.a.Type, Site: m.a.Site, Status: m.a.Status,
		Note: NoteNeedsConfirmation, Reason: handoffMessage(m.a.ID, vis)})
	return true, nil
}

// handoffMessage tells the person where the action handed to them waits,
// from what BringToFront proved: ready in a tab in front of them only when
// it was proven visible.
func handoffMessage(id string, vis browser.Visibility) string {
	answer := "answer with `browserop confirm " + id + "` (or `--decline`)"
	switch {
	case vis.Visible:
		return "prepared and waiting for you in the tab in front (proven visible, its window " + vis.WindowState + "): press the site's button there or " + answer
	case vis.Headless:
		return "prepared and waiting for you in a tab of a headless Chrome, which no window shows: read what it would publish with `browserop actions show " + id +
			"` and " + answer + "; to see the tab itself, inspect it from a Chrome with a screen through the profile's DevTools socket, as `browserop login` explains, or run browserop with `headless: false`"
	}
	return "prepared and waiting for you in a tab browserop could not prove visible (" + vis.Unverified + "): look for it in Chrome, or " + answer
}

// goExecuting puts executing on disk before the click (the ledger checks the
// budget and the task's side-effect bound again in that transaction), then
// checks, right before the click, that the lease is still this pass's and
// that the task still may. From here on nothing is retried.
func (p *pass) goExecuting(m *mutation) (bool, error) {
	// A refused transition returns no action: keep the planned one for
	// the report.
	next, err := p.transition(m.a, ledger.Change{To: ledger.Executing, Reason: "performing once",
		Baseline: m.baseline, HaveBaseline: m.haveBaseline, Seen: m.seen, HaveSeen: m.haveSeen})
	if err == nil {
		m.a = next
	}
	if errors.Is(err, budgets.ErrExhausted) {
		p.sum.count(CountBudgetSkips)
		p.sum.Actions = append(p.sum.Actions, ActionReport{ActionID: m.a.ID, Entry: m.entry, Type: m.a.Type, Status: StatusBudgetSkip, Reason: err.Error()})
		return true, nil
	}
	if errors.Is(err, ledger.ErrClockBehind) {
		p.hardStopPass("the clock is behind recorded effects")
		p.report(m.a, m.entry, NoteHeld)
		return true, p.recordStop(m.a, p.stoppedFor(m.a.Site), "")
	}
	if err != nil {
		return true, err
	}
	crashPoint("after-executing")
	if !p.stillHeld() {
		// The lease moved on while this pass was paused: another operator
		// may already be reconciling this action. Do not click; it stays
		// executing under this generation and is reconciled, never redone.
		p.hardStopPass("the lease was lost before the click")
		p.report(m.a, m.entry, NoteHeld)
		return true, ledger.ErrStaleGeneration
	}
	return p.refuseOutsideAuthority(&m.a, m.in, m.entry)
}

// click sends the one click. A like or follow whose control already shows
// the done state is verified: its effect is in place, read as the actor
// preflight checked, and nothing was clicked (a click would undo it). A
// refusal the site's answer proves fails the action definitively (and a
// rate limit or a lost session stops the site); a refusal before the click
// (a hard stop, an ambiguous selector) fails it definitively and stops; a
// click proven to have sent nothing fails it definitively and stops
// nothing (notSent). Any other outcome, an error included, goes on to
// verification.
func (p *pass) click(m *mutation) (bool, error) {
	serr := m.site.Submit(p.ctx, m.tab, m.si)
	crashPoint("after-click-returned")
	m.submitErr = serr
	var hs *sites.HardStop
	refusal := sites.AsRefusal(serr)
	switch {
	case serr == nil:
	case errors.Is(serr, sites.ErrNotSent):
		// Before the uncertain paths: the landing wait timed out (the
		// error's chain says so), but nothing left the page from the
		// press until the tab tore its document down.
		return true, p.notSent(m)
	case errors.Is(serr, sites.ErrAlreadyDone):
		var err error
		m.a, err = p.transition(m.a, ledger.Change{To: ledger.Verified, Result: verify.NormalizeURL(m.site.CanonicalFor(m.in.performed(), m.in.target)),
			Reason: "verified: the control already showed the done state, read as the actor: the effect was already in place and nothing was clicked"})
		if err != nil {
			return true, err
		}
		p.report(m.a, m.entry, NoteAlreadyDone)
		return true, nil
	case refusal != nil && !errors.Is(serr, sites.ErrOutcomeUnknown):
		// The site's answer to the click proves it created nothing.
		var err error
		if m.a, err = p.transition(m.a, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: refusalReason(m.in.performed(), refusal),
			SiteWords: refusalWords(refusal)}); err != nil {
			return true, err
		}
		if refusal.Kind == sites.RefusedRateLimit || refusal.Kind == sites.RefusedLogin {
			// As its blocker screens would: nothing more on this site now.
			p.hardStop(string(refusal.Kind))
		}
		p.report(m.a, m.entry, NoteRefused)
		return true, nil
	case refusal != nil && (refusal.Kind == sites.RefusedRateLimit || refusal.Kind == sites.RefusedLogin):
		// A refusal that proves nothing (it may answer a resend, or say
		// the site already holds the item): verified below, and, as its
		// blocker screens would, nothing more on this site now.
		p.hardStop(string(refusal.Kind))
	case !errors.Is(serr, sites.ErrOutcomeUnknown) && (errors.As(serr, &hs) || errors.Is(serr, sites.ErrSelectorAmbiguous)):
		// Refused before the click: definitively not done, and unsafe to
		// go on (the stop comes before the report).
		var err error
		if m.a, err = p.transition(m.a, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "nothing was clicked: " + stopKind(serr)}); err != nil {
			return true, err
		}
		p.hardStop(stopKind(serr))
		p.report(m.a, m.entry, NoteRefusedBeforeClick)
		return true, nil
	}
	return false, nil
}

// notSent ends an action whose committing click provably sent nothing
// (sites.ErrNotSent: the browser saw no request, socket, frame or worker
// from the press until it tore the page down): failed, definitive, so a
// later pass performs it again, and no site stops. The tab, left blocked
// on about:blank, is closed with proof; the site's next action opens a
// fresh one.
func (p *pass) notSent(m *mutation) error {
	var err error
	m.a, err = p.endFailed(m.a, m.entry, ledger.Definitive,
		"not sent: the committing click was dispatched, but nothing left the page until it was torn down; "+nothingDone(m.site, m.in.performed()), NoteNotSent)
	if err != nil {
		return err
	}
	return p.retireTab(m.in.site)
}

// refusalReason says how the site refused a submission of kind k (its
// refusal kind and status, never its message: refusalWords): nothing was
// created.
func refusalReason(k kind.Kind, r *sites.Refusal) string {
	reason := fmt.Sprintf("the site refused the %s (%s", k, r.Kind)
	if r.Status != 0 {
		reason += fmt.Sprintf(", status %d", r.Status)
	}
	return reason + "); nothing was created"
}

// refusalWords is the site's own message of refusal r, quoted and escaped
// ("" for none): page text, recorded apart from the reason
// (ledger.Change.SiteWords), for the person only.
func refusalWords(r *sites.Refusal) string {
	if r.Message == "" {
		return ""
	}
	return fmt.Sprintf("%q", r.Message)
}

// land reads where the submission landed, also after an uncertain click
// (the effect may well be there): a blocker, a page off the site or a
// browser error page after the click stops the pass, and the action is
// verified all the same. It notes whether the effect may surface later
// than a search here can see.
func (p *pass) land(m *mutation) (bool, error) {
	serr := m.submitErr
	var hs *sites.HardStop
	if serr != nil && errors.As(serr, &hs) {
		// A blocker or an offsite landing after the click: this action is
		// verified below, and nothing more is done in this pass.
		p.hardStop(stopKind(serr))
	}
	page := ""
	if serr == nil {
		landed, err := m.site.Result(p.ctx, m.tab, m.si)
		if errors.As(err, &hs) {
			p.hardStop(stopKind(err))
		}
		page = landed.PageURL
		if err == nil {
			m.landed = landed
		}
		if err == nil && landed.URL != "" && m.in.kind.Creates() {
			// On disk before verification: a later "absent" is held
			// against it, also by the pass that reconciles this one.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), 30*time.Second)
			m.a, err = p.r.db.NoteLanded(ctx, p.fence(), m.a.ID, verify.NormalizeURL(landed.URL))
			cancel()
			if err != nil {
				return true, err
			}
		}
	}
	if page == "" {
		page, _ = m.tab.URL(p.ctx)
	}
	if page != "" && !slices.Contains(m.site.Origins(), browser.Origin(page)) {
		// The submission navigated outside the site (a redirect) or broke
		// (a browser error page): either way the pass does no more.
		if strings.HasPrefix(page, "chrome-error:") {
			p.hardStop("the submission ended on a browser error page")
		} else {
			p.hardStop(string(sites.StopOffsite))
		}
	}
	// The effect may surface later than any search here can see when the
	// site answered the submission by navigating on within itself, even to
	// an error status it does not declare a refusal (it is most likely
	// there, just not shown yet), or when the submission timed out or its
	// tab or browser went away before the answer: its request may still be
	// pending, at the browser or the server; so may one whose navigation
	// the browser aborted (a tab closed while the site had not answered:
	// the abort often comes before the tab's own close).
	navigated := page != "" && page != m.before && slices.Contains(m.site.Origins(), browser.Origin(page))
	m.maySurface = navigated && !errors.As(serr, &hs) ||
		errors.Is(serr, browser.ErrTimeout) || errors.Is(serr, context.DeadlineExceeded) ||
		errors.Is(serr, browser.ErrTabGone) || errors.Is(serr, browser.ErrBrowserGone) || errors.Is(serr, browser.ErrAborted)
	return false, nil
}

// verifyAndSettle records an effect the site holds for moderation as
// such; any other it verifies against the live site, and records the
// verdict.
func (p *pass) verifyAndSettle(m *mutation) (bool, error) {
	if ended, err := p.holdForModeration(m); ended || err != nil {
		return true, err
	}
	v := p.verifyLive(m.st, m.in, m.a, clickSeen{obs: m.landed, maySurface: m.maySurface}, lateClick{})
	crashPoint("after-verification")
	var err error
	m.a, err = p.settle(m.a, v, m.entry, m.submitErr, m.maySurface, performedNotes)
	return true, err
}

// holdForModeration records as moderated an action whose landed page says
// the site holds the item it created for moderation: it exists, it is not
// public, so no search can prove it yet, and it must never be performed
// again. A landed page that contradicts the intent (verify.CheckLandedResult)
// is not this action's item: verification goes on and says so.
func (p *pass) holdForModeration(m *mutation) (bool, error) {
	if m.submitErr != nil || !m.landed.Moderated {
		return false, nil
	}
	if m.in.kind.Creates() && verify.CheckLandedResult(m.in.verifyIntent(m.site, m.a.ExecutingAt), m.landed.LandedResult()) != "" {
		return false, nil
	}
	crashPoint("after-verification")
	var err error
	m.a, err = p.transition(m.a, ledger.Change{To: ledger.Moderated, Result: m.landed.URL, MaySurface: m.maySurface,
		Reason: "held for moderation: the page the submission landed on says so; it is verified once a search finds it public"})
	if err != nil {
		return true, err
	}
	p.report(m.a, m.entry, NoteModerated)
	return true, nil
}

// endFailed ends an action as failed (class, reason) and reports it under
// note. It returns the action as it ended; only the ledger's errors are
// errors.
func (p *pass) endFailed(a ledger.Action, entry string, class ledger.FailureClass, reason string, note Note) (ledger.Action, error) {
	return p.endFailedWith(a, entry, ledger.Change{To: ledger.Failed, Class: class, Reason: reason}, note)
}

// endFailedWith is endFailed with the change c (its site's words apart).
func (p *pass) endFailedWith(a ledger.Action, entry string, c ledger.Change, note Note) (ledger.Action, error) {
	a, err := p.transition(a, c)
	if err != nil {
		return a, err
	}
	p.report(a, entry, note)
	return a, nil
}

// settle records a verdict on an executing or ambiguous action. maySurface
// says the effect may show later than a search here can see; it is
// recorded on the action (verifyLive already let it keep a search that
// misses the result from proving absence, unless the site's bound on how
// late it surfaces has passed). notes are what the summary calls its end:
// performedNotes, or reconciledNotes for reconciliation.
func (p *pass) settle(a ledger.Action, v verify.Verdict, entry string, cause error, maySurface bool, notes settleNotes) (ledger.Action, error) {
	var err error
	var others []string
	if v.Outcome != verify.Verified {
		// Read again: an account seen during this pass is on the record,
		// not on the copy the pass holds.
		cur, err := p.r.db.GetAction(p.ctx, a.ID)
		if err != nil {
			return a, err
		}
		others = cur.OtherAccounts
	}
	if v.Outcome == verify.Absent && len(others) > 0 {
		v = verify.Verdict{Outcome: verify.Ambiguous, Reason: otherAccountsReason(a.Actor, others)}
	} else if v.Outcome != verify.Verified && len(others) > 0 {
		v.Reason += "; " + otherAccountsReason(a.Actor, others)
	}
	switch v.Outcome {
	case verify.Verified:
		crashPoint("before-budget-commit")
		a, err = p.transition(a, ledger.Change{To: ledger.Verified, Result: v.URL, Reason: "verified: " + v.Reason, MaySurface: maySurface})
		if err != nil {
			return a, err
		}
		crashPoint("after-verified")
		p.report(a, entry, notes.verified)
	case verify.Absent:
		return p.endFailed(a, entry, ledger.Definitive, "the effect is absent: "+v.Reason, notes.absent)
	default:
		reason := "cannot prove the outcome: " + v.Reason
		if v.Outcome == verify.Duplicate {
			reason = "more than one exact result: " + strings.Join(v.URLs, " ")
		}
		if cause != nil {
			reason += " (after: " + errorClass(cause) + ")"
		}
		if a.Status != ledger.Ambiguous {
			if a, err = p.transition(a, ledger.Change{To: ledger.Ambiguous, Reason: reason, MaySurface: maySurface}); err != nil {
				return a, err
			}
		} else if a, err = p.r.db.Recheck(p.ctx, p.fence(), a.ID, reason); err != nil {
			return a, err
		}
		if v.Settling && len(others) == 0 {
			p.settling[a.ID] = true
		} else {
			delete(p.settling, a.ID)
		}
		p.hardStopPass(stopUnresolved)
		p.report(a, entry, notes.ambiguous)
	}
	return a, nil
}

// otherAccountsReason says why an action seen under other accounts is not
// proven absent by a view read as its actor, and which accounts to check.
func otherAccountsReason(actor string, others []string) string {
	return fmt.Sprintf("while it was unsettled the site showed %s signed in instead of %s: the effect may be on %s; "+
		"a person checks there and resolves it", Handles(others), "@"+actor, Handles(others))
}

// Handles writes account handles as a person reads them: "@a, @b" (""
// for none).
func Handles(handles []string) string {
	out := make([]string, len(handles))
	for i, h := range handles {
		out[i] = "@" + h
	}
	return strings.Join(out, ", ")
}

// stillHeld reports whether the pass's lease is still current and
// unexpired, read from the ledger right before a click.
func (p *pass) stillHeld() bool {
	l, err := p.r.db.GetLease(p.ctx, p.lease.Name)
	return err == nil && l.Generation == p.lease.Generation && l.Held(p.r.now())
}

// stopOn turns a failure before the mutation into a hard stop: nothing was
// performed, the action stays planned.
func (p *pass) stopOn(err error, a ledger.Action, entry string) error {
	if errors.Is(err, ledger.ErrStaleGeneration) || errors.Is(err, errcode.ErrConfig) {
		return err
	}
	p.hardStop(stopKind(err))
	return p.reportHeld(a, entry, err)
}

func stopKind(err error) string {
	var hs *sites.HardStop
	if errors.As(err, &hs) {
		return string(hs.Kind)
	}
	return errorClass(err)
}

// errorClass names an error without its text, which may hold page content.
func errorClass(err error) string {
	switch {
	case errors.Is(err, browser.ErrBrowserGone):
		return "browser gone"
	case errors.Is(err, browser.ErrTabGone):
		return "tab gone"
	case errors.Is(err, browser.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, sites.ErrOutcomeUnknown):
		return "outcome unknown"
	case errors.Is(err, sites.ErrSelectorAmbiguous):
		return "selector ambiguous"
	case errors.Is(err, sites.ErrUnsupported):
		return "action not supported by the site"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	var hs *sites.HardStop
	if errors.As(err, &hs) {
		return string(hs.Kind)
	}
	return "error: " + err.Error()
}
