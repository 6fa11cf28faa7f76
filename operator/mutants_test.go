package operator_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// These tests guard the rules added last (issue 20, "Tests that guard the
// newest rules"): each fails on a one-line bug that a mutation run of the
// package's other tests left alive, and each such bug allows a second
// effect.

// A dead pass's clicking tab whose close could not be proven
// (closure_unverified: its pass lost the connection at its end, the
// browser ran on) and that the person has since taken elsewhere is not
// gone: it may still carry out the click. Nothing proves the like absent,
// however long ago it was, and it is not liked again. Counting a
// closure_unverified tab as gone would start the settle time at its record
// and, once it passed, like a second time.
func TestLateClickClosureUnverifiedTabIsNotGone(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	tab := w.openTab()
	_, a, rec := w.deadLike(tab)
	// The dead pass could not prove its tab closed.
	dead, err := w.db.GetLease(ctx, "browser-operator")
	require.NoError(t, err)
	rec, err = w.db.UpdateTab(ctx, dead.Fence(), rec.ID, ledger.TabChange{State: ledger.TabClosureUnverified})
	require.NoError(t, err)
	// The person took the tab elsewhere by typing an address: theirs to
	// keep, so no pass closes it and its record stays unproven.
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>elsewhere</title><p>the person's page</p>")
	}))
	t.Cleanup(elsewhere.Close)
	_, err = tab.Navigate(ctx, elsewhere.URL)
	require.NoError(t, err)
	time.Sleep(settle + 200*time.Millisecond) // past the settle time from the click and from the record

	sum := w.pass()
	r, err := w.db.GetTab(ctx, rec.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosureUnverified, r.State, "the tab is left open, its close unproven")
	got := w.action(a.ID)
	require.Equal(t, ledger.Ambiguous, got.Status, "never proven absent (%+v)", sum)
	require.Contains(t, got.FailureReason, "not proven gone")
	require.Equal(t, 1, got.Attempt)
	require.Empty(t, w.effects(demosite.EffectLike), "not liked again")
}

// The account signed in may change between the pass's identity check
// before the click and the search after it: here the site switches the
// session to carol as the post is submitted, so the post lands on carol's
// account. The identity read with the post's search sees carol and notes
// her on the action. A later pass, signed in as alice again and past the
// site's bound on how late a submission surfaces, finds nothing on alice's
// list; that is no absence (the post is on carol's): the action waits for
// a person, who is told where to look, and nothing is published again.
// Dropping that identity read (err == nil inverted) would note nobody, and
// the second pass would publish the post a second time.
func TestIdentitySeenWithThePostsSearchIsNoted(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.cfg.LeaseTTL = 3 * time.Hour // the runner's clock moves past the bound
	const text = "submitted as the site switched accounts"
	const bound = time.Hour
	var switched atomic.Bool
	site := &siteAnswers{Adapter: w.site, search: withSurfaceBound(bound),
		submit: func(ctx context.Context, tab *browser.Tab, in sites.Intent) (error, bool) {
			if !switched.Swap(true) {
				// Preflight saw alice; from the first click on, the site
				// acts as carol.
				require.NoError(t, w.srv.SetFaults(demosite.Faults{SwitchAccount: "carol"}))
			}
			return w.site.Submit(ctx, tab, in), true
		}}
	w.useRunner(nil, site)
	w.calendar("entries:\n" + post("switched", text))

	sum := w.pass()
	posts := w.postsWithText(text)
	require.Len(t, posts, 1, "published once")
	require.Equal(t, "carol", posts[0].Author, "as the account the site switched to")
	a := w.actionWithText(text)
	require.Equal(t, ledger.Ambiguous, a.Status, "%+v", sum)
	require.Equal(t, []string{"carol"}, a.OtherAccounts, "the account seen with the search is noted on the action")

	// Signed in as alice again, past the bound: alice's list does not
	// show it, which proves nothing about carol's.
	require.NoError(t, w.srv.SetFaults(demosite.Faults{}))
	w.runner.SetClock(fixedClock(time.Now().Add(bound + time.Minute)))
	sum = w.pass()
	require.Equal(t, operator.OutcomeNeedsPerson, sum.Outcome, "%+v", sum)
	a = w.actionWithText(text)
	require.Equal(t, ledger.Ambiguous, a.Status, "never proven absent: %s", a.FailureReason)
	require.Contains(t, a.FailureReason, "@carol", "the person is told which account may hold it")
	require.Equal(t, 1, a.Attempt)
	require.Len(t, w.postsWithText(text), 1, "never published again without a person")
}

// A submission whose tab is lost while it lands (browserop's attachment
// to it ends, as when Chrome detaches the tab, after the site committed
// and before it answered) may surface later than any search sees it: its
// request may still be pending at the browser, which keeps the page. Here
// the site hides new posts for thirty seconds, so every search after the
// settle time misses it; that proves nothing, and the post is not
// published again. Dropping ErrTabGone from what makes a submission "may
// surface" would prove it absent and publish it a second time.
func TestTabLostDuringTheLandingMaySurface(t *testing.T) {
	w := newWorld(t, demosite.Faults{HangAfterCommit: true, VisibilityDelay: 30 * time.Second})
	w.cfg.ActionTimeout = 30 * time.Second // the tab is lost before the landing times out
	const text = "committed, then its tab was lost"
	site := &siteAnswers{Adapter: w.site,
		submit: func(ctx context.Context, tab *browser.Tab, in sites.Intent) (error, bool) {
			// The page lives on, its submission pending: closed when the
			// test ends (which also ends the site's hang).
			t.Cleanup(func() { w.b.CloseTarget(context.Background(), tab.ID()) })
			lost := make(chan struct{})
			go func() {
				defer close(lost)
				// Once the site committed (and hangs on its answer), the
				// attachment to the tab ends.
				for len(w.postsWithText(text)) == 0 {
					time.Sleep(10 * time.Millisecond)
				}
				tab.Release()
			}()
			err := w.site.Submit(ctx, tab, in)
			<-lost
			require.ErrorIs(t, err, browser.ErrTabGone, "the landing ended with its tab")
			return err, true
		}}
	w.useRunner(nil, site)
	w.calendar("entries:\n" + post("lost", text))

	sum := w.pass()
	a := w.actionWithText(text)
	require.Equal(t, ledger.Ambiguous, a.Status, "%+v", sum)
	require.True(t, a.MaySurface, "a submission whose tab was lost during the landing may surface: %s", a.FailureReason)
	require.Contains(t, a.FailureReason, "tab gone")

	require.NoError(t, w.srv.SetFaults(demosite.Faults{VisibilityDelay: 30 * time.Second}))
	time.Sleep(settle + 200*time.Millisecond)
	sum = w.pass()
	a = w.actionWithText(text)
	require.Equal(t, ledger.Ambiguous, a.Status, "absence is not proven: %s (%+v)", a.FailureReason, sum)
	require.Equal(t, 1, a.Attempt)
	require.Len(t, w.postsWithText(text), 1, "published once")
}

// firstLookAfterClose makes the pass's first look at a like, which comes
// once the dead pass's clicking tab (record rec) is proven gone, read by
// the runner's clock as coming after that long after the proof, whatever
// the machine's load: from that look on, the runner's clock is shifted so.
// land runs right after that look read the control ("not done"), so the
// next look finds what it did.
func (w *world) firstLookAfterClose(rec ledger.Tab, after time.Duration, land func()) {
	var shift atomic.Int64
	var looked atomic.Bool
	site := &siteAnswers{Adapter: w.site, search: func(_ sites.Query, r sites.SearchResult) sites.SearchResult {
		if looked.Swap(true) {
			return r
		}
		tr, err := w.db.GetTab(context.Background(), rec.ID)
		require.NoError(w.t, err)
		require.Contains(w.t, []ledger.TabState{ledger.TabClosedVerified, ledger.TabMissing}, tr.State,
			"the first look comes after the proof that the clicking tab is gone")
		require.Len(w.t, r.Items, 1)
		require.Equal(w.t, "like", r.Items[0].State, "the first look reads the control not done")
		shift.Store(int64(time.Until(tr.UpdatedAt.Add(after))))
		land()
		return r
	}}
	w.useRunner(nil, site)
	w.runner.SetClock(func() time.Time { return time.Now().Add(time.Duration(shift.Load())) })
}

// The person closes the tab while the site has committed the post and not
// answered: the browser aborts the navigation (net::ERR_ABORTED), often
// before the tab's close reaches the pass. Either way the submission may
// still surface, and a view without it proves nothing (issue 20, seen
// while killing the landing mutant).
func TestTabClosedDuringTheLandingMaySurface(t *testing.T) {
	w := newWorld(t, demosite.Faults{HangAfterCommit: true, VisibilityDelay: 30 * time.Second})
	w.cfg.ActionTimeout = 30 * time.Second
	const text = "committed, then the person closed its tab"
	site := &siteAnswers{Adapter: w.site,
		submit: func(ctx context.Context, tab *browser.Tab, in sites.Intent) (error, bool) {
			closed := make(chan struct{})
			go func() {
				defer close(closed)
				for len(w.postsWithText(text)) == 0 {
					time.Sleep(10 * time.Millisecond)
				}
				_, _ = w.b.CloseTarget(context.Background(), tab.ID())
			}()
			err := w.site.Submit(ctx, tab, in)
			<-closed
			require.ErrorIs(t, err, sites.ErrOutcomeUnknown)
			require.True(t, errors.Is(err, browser.ErrTabGone) || errors.Is(err, browser.ErrAborted), "%v", err)
			return err, true
		}}
	w.useRunner(nil, site)
	w.calendar("entries:\n" + post("closed", text))
	sum := w.pass()
	a := w.actionWithText(text)
	require.Equal(t, ledger.Ambiguous, a.Status, "%+v", sum)
	require.True(t, a.MaySurface, "%s", a.FailureReason)

	require.NoError(t, w.srv.SetFaults(demosite.Faults{VisibilityDelay: 30 * time.Second}))
	time.Sleep(settle + 200*time.Millisecond)
	w.pass()
	a = w.actionWithText(text)
	require.Equal(t, ledger.Ambiguous, a.Status, "absence is not proven: %s", a.FailureReason)
	require.Equal(t, 1, a.Attempt)
	require.Len(t, w.postsWithText(text), 1, "published once")
}
