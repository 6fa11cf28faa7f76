package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// entry carries one due calendar entry through its task and its intents.
func (p *pass) entry(e Entry) error {
	site, ok := p.r.sites[e.Site]
	if !ok {
		p.problem(fmt.Sprintf("calendar: %s:%d: entry %q: site %q has no adapter", e.File, e.Line, e.ID, e.Site))
		return nil
	}
	task, origin, err := p.entryTask(e, site)
	if errors.Is(err, errEditedAfterPerformed) {
		// Edited after an action of it was performed: never publish the
		// edited version.
		p.sum.count("conflicts")
		p.sum.Actions = append(p.sum.Actions, ActionReport{Entry: e.ID, Type: e.Type, Status: "conflict",
			Reason: "the entry changed after an action of it was performed; it is not published"})
		p.problem(fmt.Sprintf("calendar: %s:%d: entry %q changed after an action of it was performed; restore it or give it a new id", e.File, e.Line, e.ID))
		return nil
	}
	if err != nil {
		return err
	}
	if task.Status != ledger.TaskOpen {
		return nil // cancelled, or done: its entry is settled
	}
	late := !p.r.cfg.PublishLate && p.r.now().Sub(e.At) > p.r.cfg.Grace
	return p.runEntry(e, task, origin, late)
}

// runEntry carries an entry's intents (a thread's parts in order) through
// process. late marks a calendar entry past its grace: missed, unless
// something of it was already performed.
func (p *pass) runEntry(e Entry, task ledger.Task, origin string, late bool) error {
	if late {
		// Missed only while nothing of the entry has been performed: a thread
		// already begun is finished, not left half published.
		acts, err := p.r.db.ListActions(p.ctx, ledger.ActionFilter{TaskID: task.ID})
		if err != nil {
			return err
		}
		for _, a := range acts {
			if !a.ExecutingAt.IsZero() || a.Status != ledger.Planned && a.Status != ledger.Failed {
				late = false
			}
		}
	}
	if e.Type != EntryThread {
		_, err := p.process(entryIntent(e, task, origin), e.ID, late)
		return err
	}
	parent := e.Target
	for i := range e.Parts {
		a, err := p.process(threadPart(e, task, origin, i, parent), e.ID, late)
		if err != nil {
			return err
		}
		if a.Status != ledger.Verified {
			// Part n+1 waits for part n's verified URL.
			return nil
		}
		parent = a.CanonicalResult
	}
	return nil
}

func (p *pass) problem(msg string) {
	p.sum.Problems = append(p.sum.Problems, msg)
	p.r.log.Warn("problem", "detail", msg)
}

func (p *pass) report(a ledger.Action, entry, note string) {
	rep := ActionReport{ActionID: a.ID, Entry: entry, Type: a.Type, Status: string(a.Status), Result: a.CanonicalResult, Note: note}
	if a.Status != ledger.Verified {
		rep.Reason = a.FailureReason
	}
	if rep.Reason == "" && note == "held" {
		rep.Reason = "hard stop: " + p.stoppedFor(a.Site)
	}
	p.sum.Actions = append(p.sum.Actions, rep)
	p.sum.count(note)
	p.logAction(rep)
}

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
		p.sum.count("held")
		p.sum.Actions = append(p.sum.Actions, ActionReport{Entry: entry, Type: in.typ, Status: "not_attempted", Reason: why})
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
				p.sum.count("budget_skips")
				p.sum.Actions = append(p.sum.Actions, ActionReport{Entry: entry, Type: in.typ, Status: "budget_skip", Reason: err.Error()})
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
				p.report(a, entry, "already_verified")
			}
			return a, nil
		case ledger.Failed:
			if a.FailureClass != ledger.Definitive || a.Attempt >= p.r.cfg.MaxAttempts || late {
				p.report(a, entry, "failed_before")
				return a, nil
			}
			if a, err = p.transition(a, ledger.Change{To: ledger.Planned, Reason: "replanned after a definitive failure"}); err != nil {
				return a, err
			}
		case ledger.Executing, ledger.Ambiguous:
			// Reconciliation runs first; one left means it could not be settled.
			p.hardStop("an unresolved ambiguous action")
			p.report(a, entry, "ambiguous_waiting")
			return a, nil
		}
	}
	if late {
		a, err = p.transition(a, ledger.Change{To: ledger.Failed, Class: ledger.Abandoned,
			Reason: fmt.Sprintf("missed: due more than %s ago; not published late", p.r.cfg.Grace)})
		if err != nil {
			return a, err
		}
		p.report(a, entry, "missed")
		return a, nil
	}
	return p.perform(in, a, entry)
}

// perform runs preflight, preparation, the one mutation and verification
// for a planned action.
func (p *pass) perform(in intent, a ledger.Action, entry string) (ledger.Action, error) {
	ctx := p.ctx
	if refused, err := p.refuseOutsideAuthority(&a, in, entry); refused || err != nil {
		return a, err
	}
	confirm := contains(in.task.Contract.Confirm, capabilityOf(in.typ))
	if confirm {
		c, err := p.r.db.GetConfirmation(ctx, a.ID)
		switch {
		case err == nil && c.State == ledger.ConfirmPending:
			p.report(a, entry, "needs_confirmation")
			return a, nil
		case err == nil && c.State == ledger.ConfirmDeclined:
			a, err = p.transition(a, ledger.Change{To: ledger.Failed, Class: ledger.Abandoned, Reason: "declined by " + c.By})
			if err != nil {
				return a, err
			}
			p.report(a, entry, "declined")
			return a, nil
		case err == nil && c.State == ledger.ConfirmConfirmed:
			confirm = false // confirmed: performed like any other
		case !errors.Is(err, ledger.ErrNotFound):
			return a, err
		}
	}
	st, err := p.tabFor(in.site)
	if err != nil {
		return a, p.stopOn(err, a, entry)
	}
	site, si := st.site, in.sitesIntent()

	// A baseline before anything is prepared: the identical items already
	// on the site are never this action's result, so verification can tell
	// the result by URL instead of trusting the site's clock to agree with
	// ours.
	var baseline []string
	haveBaseline := false
	if in.kind.Creates() {
		res, err := site.Search(ctx, st.tab, sites.Query{Kind: in.kind, Actor: in.actor, Target: in.target})
		var hs *sites.HardStop
		switch {
		case err == nil:
			now := p.r.now()
			baseline, haveBaseline = verify.BaselineOf(in.verifyIntent(now), toSearch(res, now))
		case errors.As(err, &hs):
			return a, p.stopOn(err, a, entry)
		}
	}

	// Preflight, before every mutation. It only observes, so a tab that
	// disappeared (closed by the person) is recovered and it runs again.
	var tab *browser.Tab
	var before string // the page the submission starts from
	for attempt := 0; ; attempt++ {
		tab = st.tab
		status, err := site.Open(ctx, tab, si)
		if err == nil {
			before, err = sites.PreflightURL(ctx, site, tab, in.actor, status)
		}
		if err == nil {
			break
		}
		if attempt == 0 && errors.Is(err, browser.ErrTabGone) {
			if st, err = p.tabFor(in.site); err == nil {
				continue
			}
		}
		return a, p.stopOn(err, a, entry)
	}
	b, err := p.r.getBrowser(ctx)
	if err != nil || !b.Owns(tab.ID()) {
		return a, p.stopOn(&sites.HardStop{Kind: "ownership", Detail: "browserop no longer owns the tab"}, a, entry)
	}
	if in.target != "" && in.kind != sites.KindPost {
		if browser.LooseURL(before) != browser.LooseURL(in.target) {
			return a, p.stopOn(&sites.HardStop{Kind: sites.StopTarget, Detail: "the target did not resolve to the intended page"}, a, entry)
		}
	}

	// Prepare the exact payload and read it back.
	if in.kind.Creates() {
		if _, err := site.Fill(ctx, tab, si); errors.Is(err, sites.ErrReadBackMismatch) {
			a, err = p.transition(a, ledger.Change{To: ledger.Failed, Class: ledger.Definitive,
				Reason: "the editor's read-back differs from the intended text; nothing was submitted"})
			if err != nil {
				return a, err
			}
			p.report(a, entry, "read_back_mismatch")
			return a, nil
		} else if err != nil {
			return a, p.stopOn(err, a, entry)
		}
	}

	if confirm {
		// Prepared and read back: the person reviews it in this tab, which
		// is theirs now and stays open; a later pass goes on once they
		// confirm, with a fresh preflight in a tab of its own.
		if _, err := p.r.db.RequestConfirmation(ctx, p.fence(), a.ID); err != nil {
			return a, err
		}
		if err := p.handOff(in.site, in.task.ID); err != nil {
			return a, err
		}
		p.report(a, entry, "needs_confirmation")
		return a, nil
	}

	// Executing is on disk before the click.
	a, err = p.transition(a, ledger.Change{To: ledger.Executing, Reason: "performing once", Baseline: baseline, HaveBaseline: haveBaseline})
	if errors.Is(err, budgets.ErrExhausted) {
		p.sum.count("budget_skips")
		p.sum.Actions = append(p.sum.Actions, ActionReport{ActionID: a.ID, Entry: entry, Type: a.Type, Status: "budget_skip", Reason: err.Error()})
		return a, nil
	}
	if errors.Is(err, ledger.ErrClockBehind) {
		p.hardStop("the clock is behind recorded effects")
		p.report(a, entry, "held")
		return a, nil
	}
	if err != nil {
		return a, err
	}
	crashPoint("after-executing")
	if !p.stillHeld() {
		// The lease moved on while this pass was paused: another operator
		// may already be reconciling this action. Do not click; it stays
		// executing under this generation and is reconciled, never redone.
		p.hardStop("the lease was lost before the click")
		p.report(a, entry, "held")
		return a, ledger.ErrStaleGeneration
	}
	if refused, err := p.refuseOutsideAuthority(&a, in, entry); refused || err != nil {
		return a, err
	}
	serr := site.Submit(ctx, tab, si)
	crashPoint("after-click-returned")
	var hs *sites.HardStop
	switch {
	case serr == nil:
	case errors.Is(serr, sites.ErrAlreadyDone):
		a, err = p.transition(a, ledger.Change{To: ledger.Failed, Class: ledger.Abandoned,
			Reason: "the control already showed the done state; nothing was clicked"})
		if err != nil {
			return a, err
		}
		p.report(a, entry, "already_done")
		return a, nil
	case !errors.Is(serr, sites.ErrOutcomeUnknown) && (errors.As(serr, &hs) || errors.Is(serr, sites.ErrSelectorAmbiguous)):
		// Refused before the click: definitively not done, and unsafe to go on.
		a, err = p.transition(a, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "nothing was clicked: " + stopKind(serr)})
		if err != nil {
			return a, err
		}
		p.hardStop(stopKind(serr))
		p.report(a, entry, "refused_before_click")
		return a, nil
	}

	// Verify against the live page, also after an uncertain submit: the
	// effect may well be there.
	if serr != nil && errors.As(serr, &hs) {
		// A blocker or an offsite landing after the click: this action is
		// verified below, and nothing more is done in this pass.
		p.hardStop(stopKind(serr))
	}
	var landed sites.Observed
	page := ""
	if serr == nil {
		landed, err = site.Result(ctx, tab, si)
		if errors.As(err, &hs) {
			p.hardStop(stopKind(err))
		}
		page = landed.PageURL
	}
	if page == "" {
		page, _ = tab.URL(ctx)
	}
	if page != "" && !contains(site.Origins(), browser.Origin(page)) {
		// The submission navigated outside the site (a redirect) or broke
		// (a browser error page): either way the pass does no more.
		if strings.HasPrefix(page, "chrome-error:") {
			p.hardStop("the submission ended on a browser error page")
		} else {
			p.hardStop(string(sites.StopOffsite))
		}
	}
	// The effect may surface later than any search here can see when the
	// site answered the submission by navigating on within itself (it is
	// most likely there, just not shown yet), or when the submission timed
	// out or its tab or browser went away before the answer: its request
	// may still be pending, at the browser or the server.
	maySurface := serr == nil && page != "" && page != before && contains(site.Origins(), browser.Origin(page)) ||
		errors.Is(serr, browser.ErrTimeout) || errors.Is(serr, context.DeadlineExceeded) ||
		errors.Is(serr, browser.ErrTabGone) || errors.Is(serr, browser.ErrBrowserGone)
	v := p.verifyLive(st, in, a, landed.URL, lateClick{})
	crashPoint("after-verification")
	return p.settle(a, v, entry, serr, maySurface, "")
}

// settle records a verdict on an executing or ambiguous action. maySurface
// says the effect may show later than a search here can see: then a search
// that misses the result is not a definitive absence, and the action waits,
// ambiguous, to be found by a later reconciliation or settled by a person.
// notePrefix marks reconciliation in the summary.
func (p *pass) settle(a ledger.Action, v verify.Verdict, entry string, cause error, maySurface bool, notePrefix string) (ledger.Action, error) {
	var err error
	if v.Outcome == verify.Absent && (maySurface || a.MaySurface) {
		v = verify.Verdict{Outcome: verify.Ambiguous, Reason: "the effect may still surface (the site answered, or the submission timed out), so its absence is not proof"}
	}
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
		p.report(a, entry, notePrefix+"verified")
	case verify.Absent:
		a, err = p.transition(a, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "the effect is absent: " + v.Reason})
		if err != nil {
			return a, err
		}
		p.report(a, entry, notePrefix+"absent")
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
		p.hardStop("an unresolved ambiguous action")
		p.report(a, entry, notePrefix+"ambiguous")
	}
	return a, nil
}

// otherAccountsReason says why an action seen under other accounts is not
// proven absent by a view read as its actor, and which accounts to check.
func otherAccountsReason(actor string, others []string) string {
	return fmt.Sprintf("while it was unsettled the site showed %s signed in instead of %s: the effect may be on %s; "+
		"a person checks there and resolves it", atList(others), "@"+actor, atList(others))
}

func atList(handles []string) string {
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
	if errors.Is(err, ledger.ErrStaleGeneration) || errors.Is(err, ErrConfig) {
		return err
	}
	p.hardStop(stopKind(err))
	p.report(a, entry, "held")
	return nil
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

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}
