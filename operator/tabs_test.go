package operator_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
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

// A pass that died left its tab records live: the next pass closes the
// tab that is still there, with proof, and marks the one that is gone.
func TestPassReconcilesEarlierTabs(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	l, err := w.db.AcquireLease(ctx, "browser-operator", "died", time.Millisecond)
	require.NoError(t, err)
	orphan, err := w.b.NewTab(ctx, "about:blank")
	require.NoError(t, err)
	_, err = orphan.Navigate(ctx, w.base+"/home")
	require.NoError(t, err)
	left, err := w.db.RecordTab(ctx, l.Fence(), ledger.Tab{RunID: "run_died", TargetID: orphan.ID().Raw(),
		URL: browser.LooseURL(w.base), BindingHash: "b"})
	require.NoError(t, err)
	gone, err := w.db.RecordTab(ctx, l.Fence(), ledger.Tab{RunID: "run_died", TargetID: "0123456789ABCDEF0123456789ABCDEF",
		URL: browser.LooseURL(w.base), BindingHash: "b"})
	require.NoError(t, err)
	orphan.Release() // the dead pass's handle is gone; the tab stays open
	time.Sleep(5 * time.Millisecond)

	w.calendar("entries:\n" + post("p1", "after a crash"))
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
	got, err := w.db.GetTab(ctx, left.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosedVerified, got.State)
	got, err = w.db.GetTab(ctx, gone.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabMissing, got.State)
	inv, err := w.b.Targets(ctx)
	require.NoError(t, err)
	require.True(t, inv.Complete)
	require.False(t, inv.Has(orphan.ID()), "the orphan tab was closed")
}

// The person closes browserop's tab in the middle of a pass: the tab is
// recovered on its stored URL in a new inspection epoch, and every post is
// published exactly once.
func TestPassRecoversClosedTab(t *testing.T) {
	w := newWorld(t, demosite.Faults{Slow: 400 * time.Millisecond})
	ctx := context.Background()
	w.calendar("entries:\n" + post("p1", "one") + post("p2", "two") + post("p3", "three"))
	done := make(chan struct{})
	closed := make(chan bool, 1)
	go func() {
		defer close(closed)
		for {
			select {
			case <-done:
				closed <- false
				return
			case <-time.After(100 * time.Millisecond):
			}
			if len(w.effects(demosite.EffectPost)) == 0 {
				continue
			}
			inv, err := w.b.Targets(ctx)
			if err != nil {
				continue
			}
			for _, tg := range inv.Targets {
				if tg.Owned && strings.HasPrefix(tg.URL, w.base) {
					tab, err := w.b.AttachOwned(ctx, tg.ID)
					if err == nil {
						w.b.CloseTab(ctx, tab)
						closed <- true
						return
					}
				}
			}
		}
	}()
	sum := w.pass()
	close(done)
	require.True(t, <-closed, "the test closed the pass's tab")
	require.Equal(t, 1, sum.Counts["tabs_recovered"], "%+v", sum)
	perText := map[string]int{}
	for _, e := range w.effects(demosite.EffectPost) {
		perText[e.Text]++
	}
	for _, text := range []string{"one", "two", "three"} {
		require.LessOrEqual(t, perText[text], 1, "never twice: %q", text)
	}
	// Whatever the close interrupted is settled by the next pass.
	w.srv.SetFaults(demosite.Faults{})
	w.pass()
	for _, a := range w.actions() {
		require.Equal(t, ledger.Verified, a.Status, "%+v", a)
	}
	require.Len(t, w.effects(demosite.EffectPost), 3)
	tabs, err := w.db.ListTabs(ctx, "")
	require.NoError(t, err)
	epochs := 0
	for _, tb := range tabs {
		epochs = max(epochs, tb.Epoch)
	}
	require.Equal(t, 2, epochs, "the recovered tab is a new inspection epoch")
	w.checkBooks()
}

// Seed 51 at the pass level: a pass died between creating its tab and
// recording the tab's target. Its record is opening and the tab is on the
// record's marker URL: the next pass finds it by the marker and closes it,
// even with nothing to publish. An opening record whose tab never came to
// be goes missing.
func TestPassClosesTabLeftOpening(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.cfg.BrowserRunning = func() bool { return true }
	ctx := context.Background()
	l, err := w.db.AcquireLease(ctx, "browser-operator", "died", time.Millisecond)
	require.NoError(t, err)
	opening, err := w.db.RecordTab(ctx, l.Fence(), ledger.Tab{RunID: "run_died", State: ledger.TabOpening,
		URL: browser.LooseURL(w.base), BindingHash: browser.BindingHash("demo", "run_died")})
	require.NoError(t, err)
	never, err := w.db.RecordTab(ctx, l.Fence(), ledger.Tab{RunID: "run_died", State: ledger.TabOpening,
		URL: browser.LooseURL(w.base), BindingHash: browser.BindingHash("demo", "run_died", "2")})
	require.NoError(t, err)
	orphan, err := w.b.NewTab(ctx, operator.TabMarker(opening))
	require.NoError(t, err)
	orphan.Release()
	// The person's own blank tab with a look-alike URL is not browserop's.
	lookalike, err := w.b.NewTab(ctx, "about:blank#browserop-tab-999999-0000000000000000")
	require.NoError(t, err)
	t.Cleanup(func() { w.b.CloseTab(ctx, lookalike) })
	time.Sleep(5 * time.Millisecond)

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 1, sum.Counts["tabs_closed_verified"], "%+v", sum.Counts)
	require.Equal(t, 1, sum.Counts["tabs_missing"], "%+v", sum.Counts)
	got, err := w.db.GetTab(ctx, opening.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosedVerified, got.State)
	require.Equal(t, orphan.ID().Raw(), got.TargetID, "the tab found by its marker is on the record")
	got, err = w.db.GetTab(ctx, never.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabMissing, got.State)
	inv, err := w.b.Targets(ctx)
	require.NoError(t, err)
	require.True(t, inv.Complete)
	require.False(t, inv.Has(orphan.ID()), "the marked tab was closed")
	require.True(t, inv.Has(lookalike.ID()), "a tab no record names stays open")
}

// Seed 106 at the pass level: a live tab record an earlier pass left is
// reconciled at the start of a pass that has nothing to do, when a
// browser runs; with no browser known to run, the pass starts none for it.
func TestPassWithNothingToDoClosesEarlierTabs(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	connects := 0
	running := false
	w.cfg.BrowserRunning = func() bool { return running }
	w.runner = operator.NewRunner(w.db, []sites.Adapter{w.site}, w.policy, w.planner,
		func(context.Context) (*browser.Browser, error) { connects++; return w.b, nil }, w.cfg, nil)
	l, err := w.db.AcquireLease(ctx, "browser-operator", "died", time.Millisecond)
	require.NoError(t, err)
	orphan, err := w.b.NewTab(ctx, w.base+"/home")
	require.NoError(t, err)
	left, err := w.db.RecordTab(ctx, l.Fence(), ledger.Tab{RunID: "run_died", TargetID: orphan.ID().Raw(),
		URL: browser.LooseURL(w.base), BindingHash: "b"})
	require.NoError(t, err)
	orphan.Release()
	time.Sleep(5 * time.Millisecond)

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Zero(t, connects, "no browser is started only to reconcile tabs")
	got, err := w.db.GetTab(ctx, left.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabLive, got.State, "the record waits for a browser")

	running = true
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 1, connects)
	require.Equal(t, 1, sum.Counts["tabs_closed_verified"], "%+v", sum.Counts)
	got, err = w.db.GetTab(ctx, left.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosedVerified, got.State)
	inv, err := w.b.Targets(ctx)
	require.NoError(t, err)
	require.False(t, inv.Has(orphan.ID()), "the tab was closed")
}

// The browser connection ends in the middle of a pass, between two
// actions, while the browser lives on: the pass connects again, takes its
// tab up again (a new inspection epoch, identity checked again) rather
// than opening another and orphaning the first, and closes it with proof
// at the end.
func TestPassResumesTabAfterConnectionLoss(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.cfg.BrowserRunning = func() bool { return true }
	ctx := context.Background()
	portFile := filepath.Join(w.b.ProfileDir(), browser.ActivePortFileName)
	var mu sync.Mutex
	var conns []*browser.Browser
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range conns {
			b.Disconnect()
		}
	})
	// The connection drops right after the search that verifies the
	// first post found it.
	site := &cutAfterFound{Adapter: w.site, text: "before the loss", cut: func() {
		mu.Lock()
		defer mu.Unlock()
		conns[0].Disconnect()
	}}
	w.runner = operator.NewRunner(w.db, []sites.Adapter{site}, w.policy, w.planner,
		func(ctx context.Context) (*browser.Browser, error) {
			b, err := browser.Attach(ctx, browser.Config{DevToolsActivePortFile: portFile, ActionTimeout: 4 * time.Second})
			if err == nil {
				mu.Lock()
				conns = append(conns, b)
				mu.Unlock()
			}
			return b, err
		}, w.cfg, nil)
	w.calendar("entries:\n" + post("c1", "before the loss") + post("c2", "after the loss"))
	sum := w.pass()
	require.True(t, site.done.Load(), "the connection was cut")
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Len(t, w.effects(demosite.EffectPost), 2, "each post once")
	require.Equal(t, 2, sum.Counts["verified"], "%+v", sum.Counts)
	require.Equal(t, 1, sum.Counts["tabs_resumed"], "%+v", sum.Counts)
	require.Zero(t, sum.Counts["tabs_recovered"], "the tab was not reopened: %+v", sum.Counts)
	require.Equal(t, 1, sum.Counts["tabs_closed_verified"], "%+v", sum.Counts)
	tabs, err := w.db.ListTabs(ctx, "")
	require.NoError(t, err)
	require.Len(t, tabs, 1)
	require.Equal(t, ledger.TabClosedVerified, tabs[0].State)
	require.Equal(t, 2, tabs[0].Epoch, "taking the tab up again starts a new epoch")
	inv, err := w.b.Targets(ctx)
	require.NoError(t, err)
	require.False(t, inv.Has(browser.TargetID(tabs[0].TargetID)), "the tab is closed")
}

// cutAfterFound is an adapter that calls cut once, after a search found
// an item with text.
type cutAfterFound struct {
	sites.Adapter
	text string
	cut  func()
	done atomic.Bool
}

func (c *cutAfterFound) Search(ctx context.Context, tab *browser.Tab, q sites.Query) (sites.SearchResult, error) {
	r, err := c.Adapter.Search(ctx, tab, q)
	if err == nil && !c.done.Load() {
		for _, it := range r.Items {
			if it.Text == c.text {
				c.done.Store(true)
				c.cut()
				break
			}
		}
	}
	return r, err
}

// A record left live with its tab still on the marker (a pass died while
// its first page loaded), and one left closure_unverified with its tab
// still there (a pass lost its connection at its end), are closed by the
// next pass.
func TestPassClosesMarkedAndUnprovenTabs(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.cfg.BrowserRunning = func() bool { return true }
	ctx := context.Background()
	l, err := w.db.AcquireLease(ctx, "browser-operator", "died", time.Millisecond)
	require.NoError(t, err)
	rec, err := w.db.RecordTab(ctx, l.Fence(), ledger.Tab{RunID: "run_died", State: ledger.TabOpening,
		URL: browser.LooseURL(w.base), BindingHash: "b1"})
	require.NoError(t, err)
	marked, err := w.b.NewTab(ctx, operator.TabMarker(rec))
	require.NoError(t, err)
	_, err = w.db.UpdateTab(ctx, l.Fence(), rec.ID, ledger.TabChange{State: ledger.TabLive, TargetID: marked.ID().Raw()})
	require.NoError(t, err)
	unproven, err := w.b.NewTab(ctx, w.base+"/home")
	require.NoError(t, err)
	rec2, err := w.db.RecordTab(ctx, l.Fence(), ledger.Tab{RunID: "run_died", TargetID: unproven.ID().Raw(),
		URL: browser.LooseURL(w.base), BindingHash: "b2", State: ledger.TabClosureUnverified})
	require.NoError(t, err)
	marked.Release()
	unproven.Release()
	time.Sleep(5 * time.Millisecond)

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 2, sum.Counts["tabs_closed_verified"], "%+v", sum.Counts)
	for _, id := range []int64{rec.ID, rec2.ID} {
		got, err := w.db.GetTab(ctx, id)
		require.NoError(t, err)
		require.Equal(t, ledger.TabClosedVerified, got.State)
	}
	inv, err := w.b.Targets(ctx)
	require.NoError(t, err)
	require.False(t, inv.Has(marked.ID()))
	require.False(t, inv.Has(unproven.ID()))
}

// An earlier pass's tab found on another origin than its record's: closed
// when a form's response took it there (the site redirected browserop's
// submission), left open when it got there any other way (the person may
// have taken it over).
func TestPassClosesTabTheSiteSentAway(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.cfg.BrowserRunning = func() bool { return true }
	ctx := context.Background()
	other := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		io.WriteString(rw, "<!doctype html><title>elsewhere</title><p>elsewhere</p>")
	}))
	t.Cleanup(other.Close)
	require.NoError(t, w.srv.SetFaults(demosite.Faults{OffsiteRedirect: other.URL + "/elsewhere"}))
	l, err := w.db.AcquireLease(ctx, "browser-operator", "died", time.Millisecond)
	require.NoError(t, err)

	sent, err := w.b.NewTab(ctx, w.base+"/compose")
	require.NoError(t, err)
	_, err = sent.Fill(ctx, "textarea#compose-text", "sent away")
	require.NoError(t, err)
	_, err = sent.ClickOnceAndWait(ctx, "button#compose-submit")
	require.NoError(t, err)
	tr, err := sent.Transition(ctx)
	require.NoError(t, err)
	require.Equal(t, "form_submit", tr)
	typed, err := w.b.NewTab(ctx, w.base+"/home")
	require.NoError(t, err)
	_, err = typed.Navigate(ctx, other.URL+"/typed")
	require.NoError(t, err)
	tr, err = typed.Transition(ctx)
	require.NoError(t, err)
	require.NotEqual(t, "form_submit", tr)
	t.Cleanup(func() {
		// The pass left it to the person (disowned): adopt it back to close it.
		if w.b.Adopt(ctx, typed.ID()) == nil {
			w.b.CloseTarget(ctx, typed.ID())
		}
	})
	var recs []ledger.Tab
	for _, tab := range []*browser.Tab{sent, typed} {
		rec, err := w.db.RecordTab(ctx, l.Fence(), ledger.Tab{RunID: "run_died", TargetID: tab.ID().Raw(),
			URL: browser.LooseURL(w.base), BindingHash: "b"})
		require.NoError(t, err)
		recs = append(recs, rec)
	}
	sent.Release()
	typed.Release()
	require.NoError(t, w.srv.SetFaults(demosite.Faults{}))
	time.Sleep(5 * time.Millisecond)

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	got, err := w.db.GetTab(ctx, recs[0].ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabClosedVerified, got.State, "the tab the site sent away")
	got, err = w.db.GetTab(ctx, recs[1].ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TabLive, got.State, "the tab navigated otherwise is left, and its record")
	inv, err := w.b.Targets(ctx)
	require.NoError(t, err)
	require.False(t, inv.Has(sent.ID()))
	require.True(t, inv.Has(typed.ID()))
}
