package operator_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// deadPostAdapter is the demo adapter on base whose post opens the
// composer with a Post button that does nothing (the demosite's
// ?submit=dead): its committing click sends nothing.
func deadPostAdapter(t *testing.T, base string) sites.Adapter {
	t.Helper()
	return composeAdapter(t, base, "submit=dead")
}

// composeAdapter is the demo adapter on base whose post opens the
// composer with query (a demosite switch of the compose page).
func composeAdapter(t *testing.T, base, query string) sites.Adapter {
	t.Helper()
	raw, err := fs.ReadFile(bundled.Sites, "sites/demo.yaml")
	require.NoError(t, err)
	spec := strings.Replace(string(raw), "settle: 15s", "settle: "+settle.String(), 1)
	spec = strings.Replace(spec, "http://127.0.0.1:8787", base, 1)
	const open = `open: "{origin}/compose"`
	require.Equal(t, 1, strings.Count(spec, open), "the demo adapter's post opens the composer")
	spec = strings.Replace(spec, open, `open: "{origin}/compose?`+query+`"`, 1)
	d, err := sites.Parse("demo.yaml", []byte(spec))
	require.NoError(t, err)
	return d
}

// TestNotSentIsRetriedAndStopsNothing: a committing click that provably
// sent nothing (issue 23: the button did nothing, the landing wait timed
// out, the tab proved no request left) fails the action definitively as
// not sent, stops neither its site nor another (the site's next action
// goes on in a fresh tab), and the next pass publishes it exactly once.
func TestNotSentIsRetriedAndStopsNothing(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	other := newSecondSite(t, w, "other")
	otherSite := demoAdapterNamed(t, other.base, "other")
	w.useRunner(nil, deadPostAdapter(t, w.base), otherSite)
	bob := w.srv.SeedPost("bob", "something to answer", time.Now().Add(-time.Hour))
	now := time.Now()
	cal := fmt.Sprintf(`entries:
  - {id: dead, site: demo, actor: alice, type: post, at: %q, text: "the button did nothing"}
  - {id: answer, site: demo, actor: alice, type: reply, at: %q, target: "%s/p/%d", text: "answered after the dead click"}
  - {id: elsewhere, site: other, actor: alice, type: post, at: %q, text: "another site goes on"}
`, now.Add(-40*time.Second).UTC().Format(time.RFC3339), now.Add(-20*time.Second).UTC().Format(time.RFC3339),
		w.base, bob, now.Add(-10*time.Second).UTC().Format(time.RFC3339))
	fixedCalendar(w, now, cal)

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Empty(t, sum.HardStop, "no stop")
	require.Empty(t, sum.PassStop)
	require.Empty(t, sum.StoppedSites)
	require.Equal(t, 1, sum.Counts[string(operator.NoteNotSent)], "%+v", sum.Actions)
	require.Equal(t, 2, sum.Counts[string(operator.NoteVerified)], "the reply on the same site and the other site's post: %+v", sum.Actions)
	require.Empty(t, w.effects(demosite.EffectPost), "the dead click committed nothing")
	require.Len(t, w.effects(demosite.EffectReply), 1)
	require.Len(t, other.srv.Effects(), 1)

	var dead ledger.Action
	for _, a := range w.actions() {
		if a.Site == "demo" && a.Type == kind.Post {
			dead = a
		}
	}
	require.Equal(t, ledger.Failed, dead.Status, "%+v", dead)
	require.Equal(t, ledger.Definitive, dead.FailureClass)
	require.Contains(t, dead.FailureReason, "not sent")
	require.Contains(t, dead.FailureReason, "nothing was submitted")

	// The blocked tab was dropped and the reply opened a fresh one: two
	// tab records of the pass on the demo site. The first had text typed
	// into it for an action that was not verified: no cleanup preference
	// covers it, so it is kept open (recorded, with why); the second,
	// whose reply was verified, is proven closed.
	tabs, err := w.db.ListTabs(context.Background(), "")
	require.NoError(t, err)
	var demoTabs []ledger.Tab
	for _, rec := range tabs {
		if rec.RunID == sum.RunID && rec.BindingHash == browser.BindingHash("demo", sum.RunID) {
			demoTabs = append(demoTabs, rec)
		}
	}
	require.Len(t, demoTabs, 2, "%+v", demoTabs)
	require.Equal(t, ledger.TabKept, demoTabs[0].State, "%+v", demoTabs[0])
	require.Equal(t, ledger.KeptUnverified, demoTabs[0].KeptReason)
	require.Equal(t, ledger.TabClosedVerified, demoTabs[1].State, "%+v", demoTabs[1])

	// The page works again: the next pass publishes it, once.
	w.useRunner(nil, w.site, otherSite)
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 1, sum.Counts[string(operator.NoteVerified)], "%+v", sum.Actions)
	posts := w.effects(demosite.EffectPost)
	require.Len(t, posts, 1)
	require.Equal(t, "the button did nothing", posts[0].Text)
	a, err := w.db.GetAction(context.Background(), dead.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.Verified, a.Status)
	require.Equal(t, dead.Attempt+1, a.Attempt, "replanned once")

	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Len(t, w.effects(demosite.EffectPost), 1, "exactly once")
	require.Len(t, w.effects(demosite.EffectReply), 1)
	require.Len(t, other.srv.Effects(), 1)
}

// TestLandingTimeoutAfterASendIsNeverNotSent: a landing wait that times
// out after the page did send (the site committed and holds its answer)
// stays ambiguous in a tab that may be torn down; and a submission whose
// answer was dropped after the commit is verified: neither is ever "not
// sent", and nothing is published twice.
func TestLandingTimeoutAfterASendIsNeverNotSent(t *testing.T) {
	t.Run("HeldAnswer", func(t *testing.T) {
		w := newWorld(t, demosite.Faults{HangAfterCommit: true, VisibilityDelay: 30 * time.Second})
		w.calendar("entries:\n" + post("held", "committed, the answer held"))
		sum := w.pass()
		require.Zero(t, sum.Counts[string(operator.NoteNotSent)], "%+v", sum.Actions)
		require.Equal(t, 1, sum.Counts[string(operator.NoteAmbiguous)], "%+v", sum.Actions)
		require.Equal(t, map[ledger.Status]int{ledger.Ambiguous: 1}, w.statuses())
		require.Len(t, w.effects(demosite.EffectPost), 1)
	})
	t.Run("DroppedAnswer", func(t *testing.T) {
		w := newWorld(t, demosite.Faults{DropAfterCommit: true})
		w.calendar("entries:\n" + post("dropped", "committed, the answer dropped"))
		sum := w.pass()
		require.Zero(t, sum.Counts[string(operator.NoteNotSent)], "%+v", sum.Actions)
		require.Equal(t, map[ledger.Status]int{ledger.Verified: 1}, w.statuses(), "%+v", sum.Actions)
		require.NoError(t, w.srv.SetFaults(demosite.Faults{}))
		w.pass()
		require.Len(t, w.effects(demosite.EffectPost), 1)
		w.checkBooks()
	})
}

// TestNotSentNeverOnAPersonsTab: a tab handed to the person (handOff
// disowns it, which releases browserop's handle) is never clicked, let
// alone torn down to prove a click sent nothing, even when its handle
// allowed it: the person's page stays as it was.
func TestNotSentNeverOnAPersonsTab(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	page := w.base + "/compose?submit=dead"
	tab, err := w.b.NewTab(ctx, page)
	require.NoError(t, err)
	id := tab.ID()
	t.Cleanup(func() {
		if w.b.Adopt(context.Background(), id) == nil {
			_, _ = w.b.CloseTarget(context.Background(), id)
		}
	})
	_, err = tab.Fill(ctx, "#compose-text", "the person's draft")
	require.NoError(t, err)
	tab.AllowTeardown(true)
	w.b.Disown(id)
	tab.SetActionTimeout(3 * time.Second)
	_, err = tab.ClickOnceAndLand(ctx, "#compose-submit", browser.LandingSigns{Navigation: true})
	require.ErrorIs(t, err, browser.ErrTabGone, "the handle is released")
	require.NotErrorIs(t, err, browser.ErrNotSent)
	inv, err := w.b.Targets(ctx)
	require.NoError(t, err)
	require.True(t, inv.Complete)
	var url string
	for _, tg := range inv.Targets {
		if tg.ID == id {
			url = tg.URL
		}
	}
	require.Equal(t, page, url, "the person's page was not torn down")
	require.Empty(t, w.effects(""))
}
