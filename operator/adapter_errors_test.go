package operator_test

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// A field selector the page does not match fails the action before
// anything is typed, definitively, with a reason that names the selector
// and the page: not a hard stop that holds the entry and stops the site
// on every pass. The site's next entry goes on.
func TestBrokenFieldSelectorFailsNamingIt(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	raw, err := fs.ReadFile(bundled.Sites, "sites/demo.yaml")
	require.NoError(t, err)
	spec := strings.Replace(string(raw), "settle: 15s", "settle: "+settle.String(), 1)
	spec = strings.Replace(spec, "http://127.0.0.1:8787", w.base, 1)
	broken := strings.Replace(spec, `selector: "textarea#compose-text"`, `selector: "textarea#composer-text"`, 1)
	require.NotEqual(t, spec, broken)
	d, err := sites.Parse("demo.yaml", []byte(broken))
	require.NoError(t, err)
	w.useRunner(nil, d)
	w.calendar("entries:\n" + post("broken", "never typed") +
		"  - {id: liked, site: demo, actor: alice, type: follow, at: \"{at}\", target: \"{base}/u/bob\"}\n")

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "no hard stop: %+v", sum)
	require.Equal(t, 1, sum.Counts["step_failed"], "%v", notes(sum))
	require.Equal(t, 1, sum.Counts["verified"], "the site's next entry goes on: %v", notes(sum))
	require.Empty(t, w.effects(demosite.EffectPost), "nothing was submitted")
	var a ledger.Action
	for _, x := range w.actions() {
		if x.Type == "post" {
			a = x
		}
	}
	require.Equal(t, ledger.Failed, a.Status)
	require.Equal(t, ledger.Definitive, a.FailureClass)
	// The adapter's detail is kept apart from the reason, for the person.
	require.Equal(t, "a step before the click failed; nothing was submitted", a.FailureReason)
	require.Contains(t, a.FailureSiteWords, `the field "textarea#composer-text" never showed a visible element`)
	require.Contains(t, a.FailureSiteWords, "(on "+w.base+"/compose)")
}

// An action may open a page built from its target's parts instead of the
// target itself: preflight then checks that it landed on that page (here
// the post's own page, for a target that carries a tracking query the
// site's links lack), and the like is done once and verified.
func TestOpenFromTheTargetsParts(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	bob := w.srv.SeedPost("bob", "something to like", time.Now().Add(-time.Hour))
	raw, err := fs.ReadFile(bundled.Sites, "sites/demo.yaml")
	require.NoError(t, err)
	spec := strings.Replace(string(raw), "settle: 15s", "settle: "+settle.String(), 1)
	spec = strings.Replace(spec, "http://127.0.0.1:8787", w.base, 1)
	parts := strings.Replace(spec, "  like:\n    open: \"{target}\"\n",
		"  like:\n    target: {pattern: '.*/p/(?P<id>\\d+)(?:\\?.*)?'}\n    open: \"{origin}/p/{target.id}\"\n", 1)
	require.NotEqual(t, spec, parts)
	d, err := sites.Parse("demo.yaml", []byte(parts))
	require.NoError(t, err)
	w.useRunner(nil, d)
	w.calendar(fmt.Sprintf("entries:\n  - {id: fav, site: demo, actor: alice, type: like, at: \"{at}\", target: \"{base}/p/%d?utm=mail\"}\n", bob))

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 1, sum.Counts["verified"], "%v", notes(sum))
	require.Len(t, w.effects(demosite.EffectLike), 1)
}

// A hard stop before the click says its cause in the pass's report (and
// so in `run`'s output and log), not only its kind: here who is signed
// in instead of the entry's actor.
func TestHeldActionSaysWhy(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.calendar("entries:\n  - {id: bobs, site: demo, actor: bob, type: post, at: \"{at}\", text: \"not alice's\"}\n")
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["held"], "%v", notes(sum))
	var held *operator.ActionReport
	for i, r := range sum.Actions {
		if r.Note == operator.NoteHeld {
			held = &sum.Actions[i]
		}
	}
	require.NotNil(t, held)
	require.True(t, strings.HasPrefix(held.Reason, "hard stop: identity_mismatch ("), held.Reason)
	require.Contains(t, held.Reason, "alice", "the account signed in is named")
	require.Empty(t, w.effects(""))
}

// A submission that timed out (the site held its answer) may surface
// late: while the site has not shown it, inside its surface_within, it
// waits for the site, not for a person. The pass ends waiting_for_site
// (exit 6), not needs_person, and a later pass verifies it by itself.
func TestSettlingWaitsForTheSite(t *testing.T) {
	w := newWorld(t, demosite.Faults{HangAfterCommit: true, VisibilityDelay: 8 * time.Second})
	w.useRunner(nil, wrongAdapter(t, w, "settle: "+settle.String()+"\n", "settle: "+settle.String()+"\n  surface_within: 1m\n"))
	w.calendar("entries:\n" + post("late", "shown a while after its answer was lost"))

	sum := w.pass()
	require.Equal(t, operator.OutcomeWaiting, sum.Outcome, "%+v", sum)
	require.Empty(t, sum.NeedsPerson)
	require.Len(t, sum.WaitingForSite, 1)
	require.ErrorIs(t, sum.Err(), errcode.ErrWaitingForSite)
	require.Equal(t, errcode.ExitWaiting, errcode.Of(sum.Err()).Exit)
	require.Len(t, w.effects(demosite.EffectPost), 1)

	require.NoError(t, w.srv.SetFaults(demosite.Faults{}))
	require.Eventually(t, func() bool {
		return w.pass().Outcome == operator.OutcomeOK && w.only().Status == ledger.Verified
	}, 40*time.Second, time.Second, "a later pass verifies it, no person")
	require.Len(t, w.effects(demosite.EffectPost), 1, "published once")
}

// Waiting for a site never hides another stop: with a site stopped for a
// login earlier in the same pass, the pass ends hard_stop, not
// waiting_for_site, though its one ambiguous action waits for its site.
func TestWaitingNeverHidesAStop(t *testing.T) {
	w := newWorld(t, demosite.Faults{HangAfterCommit: true, VisibilityDelay: 8 * time.Second})
	demo := wrongAdapter(t, w, "settle: "+settle.String()+"\n", "settle: "+settle.String()+"\n  surface_within: 1m\n")
	raw, err := fs.ReadFile(bundled.Sites, "sites/demo.yaml")
	require.NoError(t, err)
	spec := strings.Replace(string(raw), "http://127.0.0.1:8787", w.base, 1)
	spec = strings.Replace(spec, `selector: "span#whoami"`, `selector: "span#nobody-here"`, 1)
	other, err := sites.Parse("other.yaml", []byte(spec))
	require.NoError(t, err)
	w.useRunner(nil, demo, other)
	w.calendar("entries:\n  - {id: first, site: other, actor: alice, type: post, at: \"{at}\", text: \"never signed in here\"}\n" +
		post("late", "shown a while after its answer was lost"))

	sum := w.pass()
	require.Equal(t, operator.OutcomeHardStop, sum.Outcome, "%+v", sum)
	require.Contains(t, sum.StoppedSites, "other")
	require.Len(t, sum.WaitingForSite, 1, "the demo's action waits for its site all the same")
	require.ErrorIs(t, sum.Err(), errcode.ErrHardStop)
}
