package operator_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/calendar"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
)

// These tests guard what may be concluded about a click whose pass ended
// before recording its outcome (docs/operator.md, "Late clicks and other
// accounts").

// likeEntry writes a calendar with one like of target and returns the entry
// as the calendar reads it.
func (w *world) likeEntry(id, target string) calendar.Entry {
	w.t.Helper()
	at := time.Now().Add(-time.Second).UTC().Truncate(time.Second)
	yaml := fmt.Sprintf("entries:\n  - {id: %s, site: demo, actor: alice, type: like, at: %q, target: %q}\n",
		id, at.Format(time.RFC3339), target)
	require.NoError(w.t, os.WriteFile(filepath.Join(w.calDir, "cal.yaml"), []byte(yaml), 0o600))
	return calendar.Entry{ID: id, At: at, Request: intent.Request{Site: "demo", Actor: "alice", Type: intent.Like, Target: target}}
}

// likeAs commits a like of post id on the site as the session of handle
// (or as whoever the site's faults make that session): the request a
// dead pass's click sent, arriving late.
func (w *world) likeAs(handle string, id int64) {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/p/%d/like", w.base, id), nil)
	require.NoError(w.t, err)
	req.AddCookie(w.srv.Login(handle))
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(w.t, err)
	resp.Body.Close()
	require.Less(w.t, resp.StatusCode, 400, "the late like was committed")
}

// deadLike plays a pass that clicked "like" on a post of bob's and died
// (operator.DeadClick): with tab nil its tab is in no browser any more;
// otherwise tab, navigated to the post, is the tab it clicked in. It returns
// the post, the action (executing) and the tab's record.
func (w *world) deadLike(tab *browser.Tab) (int64, ledger.Action, ledger.Tab) {
	w.t.Helper()
	ctx := context.Background()
	post := w.srv.SeedPost("bob", "something to like", time.Now().Add(-time.Hour))
	target := fmt.Sprintf("%s/p/%d", w.base, post)
	e := w.likeEntry("fav", target)
	targetID := "DEADBEEF00000000000000000000DEAD"
	if tab != nil {
		_, err := tab.Navigate(ctx, target)
		require.NoError(w.t, err)
		targetID = tab.ID().Raw()
	}
	a, rec, err := operator.DeadClick(ctx, w.db, w.site, e, targetID, 200*time.Millisecond)
	require.NoError(w.t, err)
	return post, a, rec
}

// openTab opens a tab in the shared browser, closed when the test ends
// unless a pass closed it first.
func (w *world) openTab() *browser.Tab {
	w.t.Helper()
	tab, err := w.b.NewTab(context.Background(), "about:blank")
	require.NoError(w.t, err)
	w.t.Cleanup(func() { w.b.CloseTab(context.Background(), tab) })
	return tab
}

func (w *world) action(id string) ledger.Action {
	w.t.Helper()
	a, err := w.db.GetAction(context.Background(), id)
	require.NoError(w.t, err)
	return a
}

// Seed 7056 (attach mode, under load): a pass clicked "like" and was
// killed right after the click was sent. The person's Chrome carried the
// click out late, after the site had switched the session to carol, so
// the like landed on carol's account. The next pass saw carol signed in
// and left the action ambiguous; the pass after that, signed in as alice
// again, read alice's control as "not done" after the settle time, called
// the like absent, and liked again: two effects for one intent. An effect
// that may be on another account is not absent: it waits for a person,
// who is told which account may hold it.
func TestSeed7056LateClickOnAnotherAccountIsNotAbsent(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	// The dead pass's tab is gone (its target is in no browser).
	post, a, _ := w.deadLike(nil)

	// The late click lands while the site shows carol.
	require.NoError(t, w.srv.SetFaults(demosite.Faults{SwitchAccount: "carol"}))
	w.likeAs("alice", post)
	time.Sleep(300 * time.Millisecond) // the dead pass's lease expires

	sum := w.pass()
	require.Equal(t, string("identity_mismatch"), sum.HardStop, "%+v", sum)
	got := w.action(a.ID)
	require.Equal(t, ledger.Ambiguous, got.Status)
	require.Equal(t, []string{"carol"}, got.OtherAccounts, "the account seen is noted on the action")

	// Signed in as alice again, well after the settle time: alice's
	// control says "not done", which proves nothing about carol's account.
	require.NoError(t, w.srv.SetFaults(demosite.Faults{}))
	time.Sleep(settle + 200*time.Millisecond)
	sum = w.pass()
	require.Equal(t, operator.OutcomeNeedsPerson, sum.Outcome, "%+v", sum)
	got = w.action(a.ID)
	require.Equal(t, ledger.Ambiguous, got.Status, "never proven absent: %s", got.FailureReason)
	require.Contains(t, got.FailureReason, "@carol", "the person is told which account may hold it")

	likes := w.effects(demosite.EffectLike)
	require.Len(t, likes, 1, "liked once, never again without a person: %v", likes)
	require.Equal(t, "carol", likes[0].Author)
}

// A dead pass's click can still be sent by its tab until that tab is
// gone; a request it sent just before can land a little after. Absence is
// judged by the settle time counted from the proof that the tab is gone,
// not from the click: here the like lands after the dead pass's settle
// time had passed but within the settle time after the next pass closed
// its tab, and it verifies instead of being liked a second time. The
// next pass's first look, which reads "not done", comes a quarter of the
// settle time after the close by the runner's clock, however long it
// really took (a loaded machine), and the like lands right after it.
func TestLateClickSettleCountsFromTheTabsClose(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	// The dead pass's tab, still open on the site.
	post, a, rec := w.deadLike(w.openTab())
	time.Sleep(settle + 200*time.Millisecond) // the click's own settle time is over
	w.firstLookAfterClose(rec, settle/4, func() { w.likeAs("alice", post) })

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	got := w.action(a.ID)
	require.Equal(t, ledger.Verified, got.Status, "%s", got.FailureReason)
	require.Equal(t, 1, got.Attempt, "performed once")
	require.Len(t, w.effects(demosite.EffectLike), 1)
	require.Empty(t, w.effects(demosite.EffectUnlike))
}

// While the dead pass's tab may still be open (its close could not be
// proven), nothing proves the click absent, however long ago it was.
func TestLateClickUnprovenWhileTheTabMayLive(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	tab := w.openTab()
	_, a, rec := w.deadLike(tab)
	// The person took the tab elsewhere by typing an address: it is theirs
	// to keep, so it stays open and its record stays live.
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>elsewhere</title><p>the person's page</p>")
	}))
	t.Cleanup(elsewhere.Close)
	_, err := tab.Navigate(ctx, elsewhere.URL)
	require.NoError(t, err)
	time.Sleep(settle + 200*time.Millisecond)

	sum := w.pass()
	got := w.action(a.ID)
	r, err := w.db.GetTab(ctx, rec.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabLive, r.State, "the tab is left open")
	require.Equal(t, ledger.Ambiguous, got.Status, "%+v", sum)
	require.Contains(t, got.FailureReason, "not proven gone")
	require.Empty(t, w.effects(demosite.EffectLike), "not performed again")
}

// A submission the site answered but does not show yet (visibility delay
// far longer than the settle time) may surface: a later pass's complete
// search that misses it proves nothing, and it is not published again.
func TestMaySurfaceHoldsAcrossPasses(t *testing.T) {
	w := newWorld(t, demosite.Faults{VisibilityDelay: 30 * time.Second})
	w.calendar("entries:\n" + post("late", "visible only in thirty seconds"))

	sum := w.pass()
	require.Equal(t, operator.OutcomeNeedsPerson, sum.Outcome, "%+v", sum)
	as := w.actions()
	require.Len(t, as, 1)
	require.Equal(t, ledger.Ambiguous, as[0].Status)
	require.True(t, as[0].MaySurface)

	time.Sleep(settle + 200*time.Millisecond)
	sum = w.pass()
	require.Equal(t, operator.OutcomeNeedsPerson, sum.Outcome, "%+v", sum)
	as = w.actions()
	require.Len(t, as, 1)
	require.Equal(t, ledger.Ambiguous, as[0].Status, "absence is not proven: %s", as[0].FailureReason)
	require.Equal(t, 1, as[0].Attempt)
	require.Len(t, w.effects(demosite.EffectPost), 1, "published once")
}

// A tab the dead pass handed to the person (a confirmation's) was never
// clicked in by browserop: it stays open with the person and is not the
// tab the late-click rule waits for. Once the clicking tab is gone and the
// settle time has passed, the like is proven absent and performed once.
func TestLateClickHandedOffTabIsNotTheClickingTab(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	post := w.srv.SeedPost("bob", "something to like", time.Now().Add(-time.Hour))
	e := w.likeEntry("fav", fmt.Sprintf("%s/p/%d", w.base, post))
	a, _, err := operator.DeadClick(context.Background(), w.db, w.site, e, "DEADBEEF00000000000000000000DEAD", 200*time.Millisecond,
		"0FF0FF0FF0FF0FF0FF0FF0FF0FF0FF0F")
	require.NoError(t, err)
	time.Sleep(settle + 200*time.Millisecond)

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	got := w.action(a.ID)
	require.Equal(t, ledger.Verified, got.Status, "%s", got.FailureReason)
	require.Equal(t, 2, got.Attempt, "proven absent, then performed once")
	require.Len(t, w.effects(demosite.EffectLike), 1)
}

// A submission answered by a server error the adapter does not declare a
// refusal (demosite commits, then answers 500) has landed on the site: the
// effect may be there, not shown yet. Its absence is not proven after the
// settle time, so the hidden post is not published a second time.
func TestServerErrorAfterCommitMaySurface(t *testing.T) {
	w := newWorld(t, demosite.Faults{Error500AfterCommit: true, VisibilityDelay: 30 * time.Second})
	w.calendar("entries:\n" + post("err", "committed, answered 500, hidden for thirty seconds"))
	sum := w.pass()
	as := w.actions()
	require.Len(t, as, 1)
	require.Equal(t, ledger.Ambiguous, as[0].Status, "%+v", sum)
	require.True(t, as[0].MaySurface, "a 500 page on the site is a landing that may surface")

	require.NoError(t, w.srv.SetFaults(demosite.Faults{VisibilityDelay: 30 * time.Second}))
	time.Sleep(settle + 200*time.Millisecond)
	sum = w.pass()
	as = w.actions()
	require.Len(t, as, 1)
	require.Equal(t, ledger.Ambiguous, as[0].Status, "absence is not proven: %s (%+v)", as[0].FailureReason, sum)
	require.Len(t, w.effects(demosite.EffectPost), 1, "published once")
}
