package operator

import (
	"errors"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// stateLabeler is implemented by adapters that can name a like or follow
// control's done and not-done values.
type stateLabeler interface {
	StateLabels(k sites.Kind) (done, notDone string, ok bool)
}

// verifyLive searches the live site for the action's exact result and
// classifies it. Observation may repeat: while the verdict is ambiguous
// only because the site's settle time has not passed, it searches again
// until it has. landedURL, when the submit landed on a permalink, must agree
// with the result found.
func (p *pass) verifyLive(st *siteTab, in intent, a ledger.Action, landedURL string) verify.Verdict {
	opts := verify.Options{Skew: p.r.cfg.Skew}
	executingAt := a.ExecutingAt
	vin := in.verifyIntent(executingAt)
	vin.Baseline, vin.HaveBaseline = a.Baseline, a.HaveBaseline
	since := executingAt.Add(-p.r.cfg.Skew)
	if a.HaveBaseline {
		// Compared by URL, not time: search the same window as the baseline.
		since = time.Time{}
	}
	for attempt := 0; ; attempt++ {
		if p.ctx.Err() != nil {
			return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the pass was cancelled"}
		}
		res, err := st.site.Search(p.ctx, st.tab, sites.Query{Kind: in.kind, Actor: in.actor, Target: in.target, Since: since})
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
		opts.Settle = res.Settle
		now := p.r.now()
		var v verify.Verdict
		if in.kind.Creates() {
			v = verify.Classify(vin, toSearch(res, now), opts)
			if v.Outcome == verify.Verified && landedURL != "" && verify.NormalizeURL(landedURL) != verify.NormalizeURL(v.URL) {
				return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the landed page and the timeline disagree"}
			}
		} else {
			// A like or follow control shows the viewer's own state: it
			// proves something only when the viewer is the actor.
			who, err := st.site.Identity(p.ctx, st.tab)
			if err != nil || who != in.actor {
				p.hardStop(string(sites.StopIdentityMismatch))
				return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the control was not read as the actor"}
			}
			v = p.classifyState(st.site, in, vin, res, now, opts)
		}
		settled := !now.Before(executingAt.Add(res.Settle))
		if v.Outcome != verify.Ambiguous || settled || attempt > 200 {
			return v
		}
		wait := min(time.Second, time.Until(executingAt.Add(res.Settle))+50*time.Millisecond)
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
	done, notDone, ok := lab.StateLabels(in.kind)
	if !ok {
		return verify.Verdict{Outcome: verify.Ambiguous, Reason: "the site names no states for this control"}
	}
	it := res.Items[0]
	return verify.ClassifyState(vin, verify.State{Value: it.State, Done: done, NotDone: notDone, Fresh: true,
		ObservedAt: now, URL: it.Link}, opts)
}

func toSearch(res sites.SearchResult, now time.Time) verify.Search {
	s := verify.Search{Complete: res.Complete, ObservedAt: now}
	for _, it := range res.Items {
		if !it.OK() {
			// An item read with problems is never a match, but it may be
			// one: the view is not complete.
			s.Complete = false
			continue
		}
		s.Items = append(s.Items, verify.Item{Author: it.Author, Text: it.Text, Parent: it.Parent, URL: it.Link, At: it.Time})
	}
	return s
}

// reconcile settles unfinished actions against the live page before any new
// mutation: an action found executing is ambiguous (its pass ended
// mid-action); an ambiguous action is searched for. Exactly one exact
// match verifies it, a definitive absence fails it, anything else leaves it
// ambiguous and stops mutations for this pass.
func (p *pass) reconcile() error {
	acts, err := p.r.db.ListActions(p.ctx, ledger.ActionFilter{Statuses: []ledger.Status{ledger.Executing, ledger.Ambiguous}})
	if err != nil {
		return err
	}
	for _, a := range acts {
		if a.Status == ledger.Executing {
			if a, err = p.transition(a, ledger.Change{To: ledger.Ambiguous,
				Reason: "found executing at the start of a pass: the pass that performed it ended before recording the outcome"}); err != nil {
				return err
			}
		}
		in, err := fromAction(a)
		if err != nil {
			p.problem(err.Error())
			p.hardStop("an unresolved ambiguous action")
			continue
		}
		st, err := p.tabFor(a.Site)
		if err != nil {
			if errors.Is(err, ledger.ErrStaleGeneration) {
				return err
			}
			p.hardStop("an unresolved ambiguous action: " + stopKind(err))
			continue
		}
		p.reconciled[a.ID] = true
		if a, err = p.settle(a, p.verifyLive(st, in, a, ""), entryOf(in.origin), nil, false, "reconciled_"); err != nil {
			return err
		}
		p.sum.count("reconciled")
	}
	return nil
}
