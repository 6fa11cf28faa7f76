package operator_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

// These tests hold the operator's side of real publishing sites: what it
// does with a site's refusal, a moderation notice, a step that fails before
// the click, a control already done, a bound on how late a submission
// surfaces, a landed page that says something else, the text as the site
// renders it and canonical targets.

// siteAnswers is the demo adapter with some of the site's answers replaced,
// for what demosite cannot say (a refusal, a moderation notice): the
// browser, the pages and the ledger stay real. A nil hook leaves the
// adapter's own answer.
type siteAnswers struct {
	sites.Adapter
	// open, when set, answers Open instead of the adapter.
	open func(ctx context.Context, tab *browser.Tab, in sites.Intent) (int, error)
	// fill, when it returns handled, answers Fill instead of the adapter.
	fill func(ctx context.Context, tab *browser.Tab, in sites.Intent) (readBack string, err error, handled bool)
	// submit, when it returns handled, answers Submit instead of the
	// adapter (nothing is clicked unless it clicks).
	submit func(ctx context.Context, tab *browser.Tab, in sites.Intent) (err error, handled bool)
	// result and search rewrite what the adapter read.
	result    func(in sites.Intent, o sites.Observed) sites.Observed
	search    func(q sites.Query, r sites.SearchResult) sites.SearchResult
	expected  func(k kind.Kind, text string) string
	canonical func(raw string) string
}

func (s *siteAnswers) Open(ctx context.Context, tab *browser.Tab, in sites.Intent) (int, error) {
	if s.open != nil {
		return s.open(ctx, tab, in)
	}
	return s.Adapter.Open(ctx, tab, in)
}

func (s *siteAnswers) Fill(ctx context.Context, tab *browser.Tab, in sites.Intent) (string, error) {
	if s.fill != nil {
		if got, err, handled := s.fill(ctx, tab, in); handled {
			return got, err
		}
	}
	return s.Adapter.Fill(ctx, tab, in)
}

func (s *siteAnswers) Submit(ctx context.Context, tab *browser.Tab, in sites.Intent) error {
	if s.submit != nil {
		if err, handled := s.submit(ctx, tab, in); handled {
			return err
		}
	}
	return s.Adapter.Submit(ctx, tab, in)
}

func (s *siteAnswers) Result(ctx context.Context, tab *browser.Tab, in sites.Intent) (sites.Observed, error) {
	o, err := s.Adapter.Result(ctx, tab, in)
	if err == nil && s.result != nil {
		o = s.result(in, o)
	}
	return o, err
}

func (s *siteAnswers) Search(ctx context.Context, tab *browser.Tab, q sites.Query) (sites.SearchResult, error) {
	r, err := s.Adapter.Search(ctx, tab, q)
	if err == nil && s.search != nil {
		r = s.search(q, r)
	}
	return r, err
}

// StateLabels passes the adapter's like and follow states on.
func (s *siteAnswers) StateLabels(k kind.Kind) (done, notDone string, ok bool) {
	l, ok := s.Adapter.(interface {
		StateLabels(kind.Kind) (string, string, bool)
	})
	if !ok {
		return "", "", false
	}
	return l.StateLabels(k)
}

func (s *siteAnswers) Expected(k kind.Kind, actor, text string, at time.Time) string {
	if s.expected != nil {
		return s.expected(k, text)
	}
	return s.Adapter.Expected(k, actor, text, at)
}

func (s *siteAnswers) Canonical(raw string) string {
	if s.canonical != nil {
		return s.canonical(raw)
	}
	return s.Adapter.Canonical(raw)
}

func (s *siteAnswers) CanonicalFor(k kind.Kind, raw string) string {
	if s.canonical != nil {
		return s.canonical(raw)
	}
	return s.Adapter.CanonicalFor(k, raw)
}

// actionWithText is the ledger's action whose payload text is text.
func (w *world) actionWithText(text string) ledger.Action {
	w.t.Helper()
	for _, a := range w.actions() {
		if p, err := ledger.ParsePayload(a.Payload); err == nil && p.Text == text {
			return a
		}
	}
	w.t.Fatalf("no action with text %q", text)
	return ledger.Action{}
}

// republishedOnce asserts that the action with text, after a definitive
// failure and its replan, is verified on its second attempt, as the one
// post with that text, and that the books balance.
func (w *world) republishedOnce(text string) {
	w.t.Helper()
	a := w.actionWithText(text)
	require.Equal(w.t, ledger.Verified, a.Status, "%s", a.FailureReason)
	require.Equal(w.t, 2, a.Attempt)
	require.Len(w.t, w.postsWithText(text), 1)
	w.checkBooks()
}

// notes lists the notes of a summary's action reports.
func notes(sum *operator.Summary) []string {
	var out []string
	for _, r := range sum.Actions {
		out = append(out, string(r.Note))
	}
	return out
}

// A step before the click that fails (here a like's confirmation panel)
// fails the action definitively: nothing was submitted, and the pass goes
// on with the site's other entries. Fill runs for a like too.
func TestStepFailedBeforeTheClick(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	bob := w.srv.SeedPost("bob", "something to like", time.Now().Add(-time.Hour))
	var filled atomic.Int32
	site := &siteAnswers{Adapter: w.site,
		fill: func(_ context.Context, _ *browser.Tab, in sites.Intent) (string, error, bool) {
			if in.Kind != kind.Like {
				return "", nil, false
			}
			filled.Add(1)
			return "", fmt.Errorf("%w: the confirmation panel did not open \x1b[2J", sites.ErrStepFailed), true
		}}
	w.useRunner(nil, site)
	w.calendar(fmt.Sprintf("entries:\n  - {id: fav, site: demo, actor: alice, type: like, at: \"{at}\", target: \"{base}/p/%d\"}\n", bob) +
		post("after", "published after the failed step"))

	sum := w.pass()
	require.Equal(t, int32(1), filled.Load(), "the like was prepared")
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "no hard stop: %+v", sum)
	require.Equal(t, 1, sum.Counts["step_failed"], "%v", notes(sum))
	require.Equal(t, 1, sum.Counts["verified"], "the site's next entry goes on: %v", notes(sum))
	require.Empty(t, w.effects(demosite.EffectLike), "nothing was submitted")
	var like ledger.Action
	for _, a := range w.actions() {
		if a.Type == kind.Like {
			like = a
		}
	}
	require.Equal(t, ledger.Failed, like.Status)
	require.Equal(t, ledger.Definitive, like.FailureClass)
	require.True(t, like.ExecutingAt.IsZero(), "it never went executing")
	require.Equal(t, `a step before the click failed; nothing was submitted`, like.FailureReason)
	require.Equal(t, `the confirmation panel did not open \x1b[2J`, like.FailureSiteWords, "the adapter's words, escaped, kept apart")
	w.checkBooks()
}

// refuseOnce makes the site refuse the first submission of text with r
// (nothing is clicked, so nothing is created, as with a refusal); any
// later one is the adapter's.
func refuseOnce(text string, r *sites.Refusal) func(context.Context, *browser.Tab, sites.Intent) (error, bool) {
	var once sync.Once
	return func(_ context.Context, _ *browser.Tab, in sites.Intent) (err error, handled bool) {
		if in.Text != text {
			return nil, false
		}
		once.Do(func() { err, handled = r, true })
		return err, handled
	}
}

// A refusal the site's answer proves is definitive: the action fails with
// the site's message (escaped), nothing was created, and a later pass
// tries it again (within the attempts). A rate limit or a lost session
// also stops the site for the pass, as their blocker screens do; a
// duplicate or a validation refusal does not.
func TestRefusalIsDefinitive(t *testing.T) {
	for _, tc := range []struct {
		kind  sites.RefusalKind
		stops bool
	}{
		{sites.RefusedDuplicate, false},
		{sites.RefusedValidation, false},
		{sites.RefusedRateLimit, true},
		{sites.RefusedLogin, true},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			w := newWorld(t, demosite.Faults{})
			const text = "refused the first time"
			site := &siteAnswers{Adapter: w.site, submit: refuseOnce(text,
				&sites.Refusal{Kind: tc.kind, Status: 409, Message: "Slow down\x07 \u202eplease", Detail: "rule 1"})}
			w.useRunner(nil, site)
			w.calendar("entries:\n" + post("first", text) + post("second", "the site's next entry"))

			sum := w.pass()
			require.Equal(t, 1, sum.Counts["refused"], "%v", notes(sum))
			a := w.actionWithText(text)
			require.Equal(t, ledger.Failed, a.Status)
			require.Equal(t, ledger.Definitive, a.FailureClass)
			require.Equal(t, fmt.Sprintf(`the site refused the post (%s, status 409); nothing was created`, tc.kind), a.FailureReason)
			require.Equal(t, `"Slow down\a \u202eplease"`, a.FailureSiteWords, "the site's words, escaped, kept apart from the reason")
			require.Empty(t, w.postsWithText(text), "nothing was created")
			if tc.stops {
				require.Equal(t, string(tc.kind), sum.StoppedSites["demo"], "%+v", sum)
				require.Equal(t, operator.OutcomeHardStop, sum.Outcome)
				require.Len(t, w.actions(), 1, "nothing more on the site in this pass")
				require.Equal(t, operator.StatusNotAttempted, sum.Actions[len(sum.Actions)-1].Status)
			} else {
				require.Empty(t, sum.StoppedSites)
				require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
				require.Equal(t, ledger.Verified, w.actionWithText("the site's next entry").Status)
			}

			// The next pass tries it again: a definitive failure is
			// replanned, and this time the site takes it.
			sum = w.pass()
			require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
			w.republishedOnce(text)
		})
	}
}

// postsWithText returns the oracle's posts and replies with text.
func (w *world) postsWithText(text string) []demosite.Effect {
	var out []demosite.Effect
	for _, e := range w.effects("") {
		if (e.Kind == demosite.EffectPost || e.Kind == demosite.EffectReply) && e.Text == text {
			out = append(out, e)
		}
	}
	return out
}

// hideText hides from every search the items with a text while hidden is
// set: the site's public view of an item its moderators hold.
func hideText(text string, hidden *atomic.Bool) func(sites.Query, sites.SearchResult) sites.SearchResult {
	return func(_ sites.Query, r sites.SearchResult) sites.SearchResult {
		if hidden.Load() {
			r.Items = slices.DeleteFunc(r.Items, func(it sites.Item) bool { return it.Text == text })
		}
		return r
	}
}

// An effect the site holds for moderation is recorded moderated with the
// landed URL, never performed again, and does not stop a pass or wait for
// the person; reconciliation verifies it once the site shows it.
func TestModeratedIsHeldThenVerified(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	const text = "a comment the moderators hold"
	var hidden atomic.Bool
	hidden.Store(true)
	site := &siteAnswers{Adapter: w.site,
		result: func(in sites.Intent, o sites.Observed) sites.Observed {
			if in.Text == text {
				o.Moderated = true
			}
			return o
		},
		search: hideText(text, &hidden)}
	w.useRunner(nil, site)
	w.calendar("entries:\n" + post("held", text) + post("other", "published beside it"))

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "not a hard stop, nothing for a person: %+v", sum)
	require.Empty(t, sum.NeedsPerson)
	require.Equal(t, 1, sum.Counts["moderated"], "%v", notes(sum))
	require.Equal(t, 1, sum.Counts["verified"], "%v", notes(sum))
	a := w.actionWithText(text)
	require.Equal(t, ledger.Moderated, a.Status)
	effects := w.postsWithText(text)
	require.Len(t, effects, 1)
	landed := fmt.Sprintf("%s/p/%d", w.base, effects[0].PostID)
	require.Equal(t, landed, a.CanonicalResult, "the landed URL is recorded")

	// The task shows it as its own state.
	svc := w.tasks()
	st, err := svc.Get(ctx, a.TaskID)
	require.NoError(t, err)
	require.Equal(t, "moderated", st.Actions[0].Effect)
	require.Equal(t, "waiting_for_moderation", st.Interaction)
	obs, err := svc.Observe(ctx, a.TaskID)
	require.NoError(t, err)
	require.Empty(t, obs.Waiting, "nothing waits for the person")

	// Still held: never performed again, the pass goes on.
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 1, sum.Counts["awaiting_moderation"], "%v", notes(sum))
	a = w.actionWithText(text)
	require.Equal(t, ledger.Moderated, a.Status)
	require.Equal(t, 1, a.Attempt)
	require.Contains(t, a.FailureReason, "the site's public view does not show it yet")
	evs, err := w.db.Events(ctx, a.ID)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	require.Equal(t, [2]ledger.Status{ledger.Moderated, ledger.Moderated}, [2]ledger.Status{last.From, last.To}, "the look is recorded")
	require.Len(t, w.postsWithText(text), 1, "published once")

	// The moderators let it through: the next pass verifies it.
	hidden.Store(false)
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 1, sum.Counts["reconciled_verified"], "%v", notes(sum))
	a = w.actionWithText(text)
	require.Equal(t, ledger.Verified, a.Status, "%s", a.FailureReason)
	require.Equal(t, landed, a.CanonicalResult)
	require.Len(t, w.postsWithText(text), 1)
	w.checkBooks()
	res, err := svc.Get(ctx, a.TaskID)
	require.NoError(t, err)
	require.Equal(t, "done", res.Status, "its entry is settled")
	require.Equal(t, tasks.OutcomeKnownComplete, res.Result.Intents[0].Outcome)
}

// A moderated action is verified by its own item made public, not by an
// identical item elsewhere: the URL the landed page named must be the one
// found.
func TestModeratedNotVerifiedByATwin(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	const text = "held, with a twin"
	var landed atomic.Value
	landed.Store("")
	site := &siteAnswers{Adapter: w.site,
		result: func(in sites.Intent, o sites.Observed) sites.Observed {
			o.Moderated = true
			landed.Store(o.URL)
			return o
		},
		// The held item is not in the public view.
		search: func(_ sites.Query, r sites.SearchResult) sites.SearchResult {
			r.Items = slices.DeleteFunc(r.Items, func(it sites.Item) bool { return it.Link == landed.Load().(string) })
			return r
		}}
	w.useRunner(nil, site)
	w.calendar("entries:\n" + post("held", text))
	w.pass()
	a := w.actionWithText(text)
	require.Equal(t, ledger.Moderated, a.Status)
	require.Equal(t, landed.Load().(string), a.CanonicalResult)

	// The person posts the same text by hand: a twin at another URL.
	w.publishDirectly(text)
	require.Len(t, w.postsWithText(text), 2)
	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	a = w.actionWithText(text)
	require.Equal(t, ledger.Moderated, a.Status, "the twin does not verify it")
	require.Contains(t, a.FailureReason, "the landed page and the timeline disagree")
}

// A like whose control already shows the done state is done: verified,
// with the target as its result, and nothing is clicked (a click would
// undo it).
func TestAlreadyDoneIsVerified(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	bob := w.srv.SeedPost("bob", "liked already", time.Now().Add(-time.Hour))
	w.likeAs("alice", bob)
	target := fmt.Sprintf("%s/p/%d", w.base, bob)
	w.likeEntry("fav", target)

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 1, sum.Counts["already_done"], "%v", notes(sum))
	as := w.actions()
	require.Len(t, as, 1)
	require.Equal(t, ledger.Verified, as[0].Status, "%s", as[0].FailureReason)
	require.Equal(t, target, as[0].CanonicalResult)
	require.Len(t, w.effects(demosite.EffectLike), 1, "only the like that was there")
	require.Empty(t, w.effects(demosite.EffectUnlike), "nothing was clicked")
	evs, err := w.db.Events(context.Background(), as[0].ID)
	require.NoError(t, err)
	require.Contains(t, evs[len(evs)-1].Reason, "already in place and nothing was clicked")
	w.checkBooks()

	again := w.pass()
	require.Empty(t, again.Actions, "settled: its task is done")
}

// timeoutOnce makes the first submission of text time out before anything
// was clicked, as a submission whose request may still be pending looks to
// the operator: the effect may surface later than a search can see.
func timeoutOnce(text string) func(context.Context, *browser.Tab, sites.Intent) (error, bool) {
	var once sync.Once
	return func(_ context.Context, _ *browser.Tab, in sites.Intent) (err error, handled bool) {
		if in.Text != text {
			return nil, false
		}
		once.Do(func() { err, handled = fmt.Errorf("%w: %w", sites.ErrOutcomeUnknown, browser.ErrTimeout), true })
		return err, handled
	}
}

// withSurfaceBound makes every search declare that a submission surfaces
// within d at most.
func withSurfaceBound(d time.Duration) func(sites.Query, sites.SearchResult) sites.SearchResult {
	return func(_ sites.Query, r sites.SearchResult) sites.SearchResult {
		r.SurfaceWithin = d
		return r
	}
}

// fixedClock is a runner clock that reads at.
func fixedClock(at time.Time) func() time.Time { return func() time.Time { return at } }

// A submission that may surface late is not proven absent inside the
// site's bound on how late it surfaces; after it, a complete view proves
// it absent, and the intent is tried again (once).
func TestSurfaceBound(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.cfg.LeaseTTL = 3 * time.Hour // the runner's clock moves past the bound
	const text = "timed out, never sent"
	const bound = time.Hour
	site := &siteAnswers{Adapter: w.site, submit: timeoutOnce(text), search: withSurfaceBound(bound)}
	w.useRunner(nil, site)
	w.calendar("entries:\n" + post("late", text))

	sum := w.pass()
	require.Equal(t, operator.OutcomeWaiting, sum.Outcome, "inside the bound it waits for the site, not a person: %+v", sum)
	a := w.actionWithText(text)
	require.Equal(t, ledger.Ambiguous, a.Status)
	require.True(t, a.MaySurface)

	// Inside the bound: still not proven absent.
	w.runner.SetClock(fixedClock(a.ExecutingAt.Add(bound - time.Minute)))
	sum = w.pass()
	require.Equal(t, operator.OutcomeWaiting, sum.Outcome, "%+v", sum)
	a = w.actionWithText(text)
	require.Equal(t, ledger.Ambiguous, a.Status)
	require.Contains(t, a.FailureReason, "inside the time the site takes at most to show a submission")
	require.Empty(t, w.postsWithText(text))

	// After it (counted from the proof that the pass's tab that clicked
	// was closed, at the end of the first pass): absent, replanned,
	// published once.
	w.runner.SetClock(fixedClock(time.Now().Add(bound + time.Second)))
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 1, sum.Counts["reconciled_absent"], "%v", notes(sum))
	w.republishedOnce(text)
}

// The bound counts from the settle start: for a click a dead pass's tab
// could still carry out, from the proof that the tab is gone, not from the
// click.
func TestSurfaceBoundCountsFromTheClickingTabsProof(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.cfg.LeaseTTL = 3 * time.Hour
	ctx := context.Background()
	const bound = time.Hour
	site := &siteAnswers{Adapter: w.site, search: withSurfaceBound(bound)}
	w.useRunner(nil, site)
	// A dead pass clicked "like" (its tab is in no browser any more) and
	// recorded that it may surface late.
	_, a, rec := w.deadLike(nil)
	dead, err := w.db.GetLease(ctx, "browser-operator")
	require.NoError(t, err)
	a, err = w.db.Transition(ctx, dead.Fence(), a.ID, ledger.Change{To: ledger.Ambiguous, MaySurface: true,
		Reason: "the submission timed out"})
	require.NoError(t, err)
	require.True(t, a.MaySurface)
	time.Sleep(time.Second) // the dead lease expires; the tab's proof comes later than the click

	// Past the bound counted from the click, inside it counted from the
	// proof that the tab is gone (which comes at least a second later).
	w.runner.SetClock(fixedClock(a.ExecutingAt.Add(bound + 500*time.Millisecond)))
	sum := w.pass()
	r, err := w.db.GetTab(ctx, rec.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabMissing, r.State, "the tab is proven gone")
	require.True(t, r.UpdatedAt.After(a.ExecutingAt.Add(time.Second)))
	got := w.action(a.ID)
	require.Equal(t, ledger.Ambiguous, got.Status, "%+v", sum)
	require.Contains(t, got.FailureReason, "inside the time the site takes at most to show a submission")
	require.Empty(t, w.effects(demosite.EffectLike))

	// Past the bound from the proof: absent, and liked once.
	w.runner.SetClock(fixedClock(r.UpdatedAt.Add(bound + time.Second)))
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	got = w.action(a.ID)
	require.Equal(t, ledger.Verified, got.Status, "%s", got.FailureReason)
	require.Equal(t, 2, got.Attempt)
	require.Len(t, w.effects(demosite.EffectLike), 1)
}

// What the landed page read is compared with the intent: a text or an
// author other than intended is not this action's proof (nor its
// absence); a field the adapter did not read proves nothing.
func TestLandedPageThatSaysSomethingElse(t *testing.T) {
	for name, change := range map[string]func(*sites.Observed){
		"Text":   func(o *sites.Observed) { o.Text = "a text the intent does not predict" },
		"Author": func(o *sites.Observed) { o.Author = "mallory" },
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, demosite.Faults{})
			const good, bad = "the landed page agrees", "the landed page says otherwise"
			site := &siteAnswers{Adapter: w.site, result: func(in sites.Intent, o sites.Observed) sites.Observed {
				o.Read = []string{"link", "text", "author"}
				if in.Text == bad {
					change(&o)
				}
				return o
			}}
			w.useRunner(nil, site)
			w.calendar("entries:\n" + post("good", good) + post("bad", bad))
			sum := w.pass()
			require.Equal(t, ledger.Verified, w.actionWithText(good).Status, "read and equal: %v", notes(sum))
			a := w.actionWithText(bad)
			require.Equal(t, ledger.Ambiguous, a.Status, "%+v", sum)
			require.Contains(t, a.FailureReason, "the landed page")
			require.Len(t, w.postsWithText(bad), 1)
		})
	}
}

// The text compared is the text as the site renders it (Expected), and a
// target is compared in the site's canonical form (Canonical), when the
// page is opened as when the result is searched for; the ledger keeps the
// raw intent, so the idempotency key does not change.
func TestExpectedTextAndCanonicalTarget(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	bob := w.srv.SeedPost("bob", "answer me", time.Now().Add(-time.Hour))
	const sig = " ~ sent by alice"
	site := &siteAnswers{Adapter: w.site,
		// The site appends a signature to what is typed; the adapter
		// predicts it.
		fill: func(ctx context.Context, tab *browser.Tab, in sites.Intent) (string, error, bool) {
			if !in.Kind.Creates() {
				return "", nil, false
			}
			in.Text += sig
			got, err := w.site.Fill(ctx, tab, in)
			return got, err, true
		},
		expected:  func(_ kind.Kind, text string) string { return text + sig },
		canonical: func(raw string) string { u, _, _ := strings.Cut(raw, "?"); return u },
	}
	// The site sends a target with a tracking parameter on to its
	// canonical page.
	site.open = func(ctx context.Context, tab *browser.Tab, in sites.Intent) (int, error) {
		in.Target = site.Canonical(in.Target)
		return w.site.Open(ctx, tab, in)
	}
	w.useRunner(nil, site)
	target := fmt.Sprintf("%s/p/%d?ref=feed", w.base, bob)
	w.calendar("entries:\n" + post("signed", "a signed post") +
		fmt.Sprintf("  - {id: answer, site: demo, actor: alice, type: reply, at: \"{at}\", target: %q, text: \"a signed reply\"}\n", target))

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 2, sum.Counts["verified"], "%v", notes(sum))
	require.Len(t, w.postsWithText("a signed post"+sig), 1)
	require.Len(t, w.postsWithText("a signed reply"+sig), 1)
	reply := w.actionWithText("a signed reply")
	p, err := ledger.ParsePayload(reply.Payload)
	require.NoError(t, err)
	require.Equal(t, target, p.Parent, "the ledger keeps the raw target")
	want, err := (ledger.Intent{Type: kind.Reply, Actor: "alice", TargetURL: target,
		Payload: ledger.Payload{Intent: "calendar:answer", Text: "a signed reply", Parent: target}.JSON()}).Key()
	require.NoError(t, err)
	require.Equal(t, want, reply.IdempotencyKey)
	w.checkBooks()
}

// Items a search could not read are named, in fixed form, in the reason
// an action stays ambiguous, so a person reads why nothing matched.
func TestUnreadItemsNamedInTheReason(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	site := &siteAnswers{Adapter: w.site, search: func(_ sites.Query, r sites.SearchResult) sites.SearchResult {
		for i := range r.Items {
			r.Items[i].Problems = []string{"author missing"}
		}
		return r
	}}
	w.useRunner(nil, site)
	w.calendar("entries:\n" + post("unread", "published, then unreadable"))
	sum := w.pass()
	require.Equal(t, operator.OutcomeNeedsPerson, sum.Outcome, "%+v", sum)
	a := w.actionWithText("published, then unreadable")
	require.Equal(t, ledger.Ambiguous, a.Status)
	require.Contains(t, a.FailureReason, "1 item could not be read (author missing: 1)")
}
