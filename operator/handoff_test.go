package operator_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

// These tests guard issue 20's rule "a handed-off intent may already be
// done" (docs/operator.md, "Confirmations and the handed-off tab"): an
// intent prepared in a tab and handed to the person for confirmation is
// published once, whatever the order in which the person presses the
// site's own Post button in that tab, confirms or declines, and a pass
// runs. Each runs in launch mode (the runner drives the Chrome the tests
// launched, over one connection for every pass) and in attach mode (every
// pass attaches to that running Chrome anew, as `browserop run` does in
// attach mode, and disconnects at its end). The person acts over a
// DevTools connection of their own, in the handed-off tab's target.

var handoffModes = []string{"launch", "attach"}

// handoff is one agent task whose post the contract asks the person to
// confirm, after the pass that prepared it and handed its tab over.
type handoff struct {
	t      *testing.T
	w      *world
	svc    *tasks.Service
	attach bool
	task   string
	action string
	rec    ledger.Tab // the handed-off tab's record
}

func newHandoff(t *testing.T, mode, text string) *handoff {
	t.Helper()
	w := newWorld(t, demosite.Faults{})
	h := &handoff{t: t, w: w, svc: w.tasks(), attach: mode == "attach"}
	w.cfg.ActionTimeout = 10 * time.Second // the machine may be loaded: no timeout decides these tests
	if h.attach {
		w.cfg.BrowserRunning = func() bool { return true }
	}
	ctx := context.Background()
	req := w.contract("post")
	req.Contract.Confirm = []string{"post"}
	task, _, err := h.svc.Agent().Create(ctx, "handoff", req, "mcp")
	require.NoError(t, err)
	h.task = task.ID
	_, err = h.svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: text})
	require.NoError(t, err)

	sum := h.pass()
	require.Equal(t, 1, sum.Counts["needs_confirmation"], "%+v", sum)
	require.Empty(t, w.effects(""), "nothing is published before the person acts")
	// The tests' Chrome is headless: no window shows the tab, and the
	// message says so and how to answer, never that the tab is in front.
	var msg string
	for _, a := range sum.Actions {
		if a.Note == operator.NoteNeedsConfirmation {
			msg = a.Reason
		}
	}
	require.Contains(t, msg, "a tab of a headless Chrome, which no window shows", "%+v", sum.Actions)
	require.Contains(t, msg, "browserop confirm ")
	require.NotContains(t, msg, "in front")
	st, err := h.svc.Get(ctx, task.ID)
	require.NoError(t, err)
	require.Len(t, st.Actions, 1)
	h.action = st.Actions[0].ID
	tabs, err := w.db.ListTabs(ctx, task.ID)
	require.NoError(t, err)
	require.Len(t, tabs, 1)
	require.Equal(t, ledger.TabHandoff, tabs[0].State)
	h.rec = tabs[0]
	return h
}

// pass runs one pass: in attach mode on a connection of its own, ended
// with the pass as `browserop run` ends it.
func (h *handoff) pass() *operator.Summary {
	h.t.Helper()
	if !h.attach {
		return h.w.pass()
	}
	portFile := filepath.Join(h.w.b.ProfileDir(), browser.ActivePortFileName)
	r := operator.NewRunner(h.w.db, []sites.Adapter{h.w.site}, h.w.policy, h.w.planner,
		func(ctx context.Context) (*browser.Browser, error) {
			return browser.Attach(ctx, browser.Config{DevToolsActivePortFile: portFile, ActionTimeout: 4 * time.Second})
		}, h.w.cfg, nil)
	sum, err := r.Pass(context.Background())
	require.NoError(h.t, err)
	require.NoError(h.t, r.Close())
	return sum
}

// person runs actions in the handed-off tab as the person would: over a
// DevTools connection of their own to the same Chrome, in the tab's
// target, which browserop gave up. The session detaches afterwards and
// never closes the tab.
func (h *handoff) person(actions ...chromedp.Action[chromedp.Void]) error {
	ws, err := browser.ReadActivePort(filepath.Join(h.w.b.ProfileDir(), browser.ActivePortFileName))
	require.NoError(h.t, err)
	actx, acancel := remote.NewAllocator(context.Background(), ws)
	defer acancel()
	cctx, ccancel := chromedp.NewContext(actx, chromedp.WithTargetID(target.ID(h.rec.TargetID)), chromedp.WithDetachOnCancel())
	defer ccancel()
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(cctx, actions...) }()
	select {
	case err := <-done:
		return err
	case <-time.After(8 * time.Second):
		ccancel()
		<-done
		return errors.New("the tab did not answer")
	}
}

// pressPost presses demosite's own Post button in the handed-off tab.
func (h *handoff) pressPost() error {
	return h.person(chromedp.Click(chromedp.CSS("button#compose-submit")))
}

// posts waits a moment for the oracle to settle at want posts, and
// returns what it has.
func (h *handoff) posts(want int) []demosite.Effect {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := h.w.effects(demosite.EffectPost)
		if len(got) == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *handoff) confirm() {
	h.t.Helper()
	_, err := h.svc.Confirm(context.Background(), h.action, "person (test)")
	require.NoError(h.t, err)
}

func (h *handoff) decline() {
	h.t.Helper()
	_, err := h.svc.Decline(context.Background(), h.action, "person (test)", "not this one")
	require.NoError(h.t, err)
}

// requireTabClosed checks the handed-off tab was closed with proof: its
// record says so and the browser no longer lists it.
func (h *handoff) requireTabClosed() {
	h.t.Helper()
	ctx := context.Background()
	rec, err := h.w.db.GetTab(ctx, h.rec.ID)
	require.NoError(h.t, err)
	require.Equal(h.t, ledger.TabClosedVerified, rec.State, "the handed-off tab is closed with proof")
	inv, err := h.w.b.Targets(ctx)
	require.NoError(h.t, err)
	require.True(h.t, inv.Complete)
	require.False(h.t, inv.Has(browser.TargetID(h.rec.TargetID)), "the handed-off tab is gone")
}

// requireVerifiedFromHandoff checks the action is verified at the one
// post, by a reason that names the handed-off tab (and says why), and
// that the pass's report says so.
func (h *handoff) requireVerifiedFromHandoff(sum *operator.Summary, why string) {
	h.t.Helper()
	posts := h.posts(1)
	require.Len(h.t, posts, 1, "exactly one post: %v", posts)
	a := h.w.action(h.action)
	require.Equal(h.t, ledger.Verified, a.Status, "%s", a.FailureReason)
	require.Equal(h.t, fmt.Sprintf("%s/p/%d", h.w.base, posts[0].PostID), a.CanonicalResult)
	evs, err := h.w.db.Events(context.Background(), h.action)
	require.NoError(h.t, err)
	last := evs[len(evs)-1]
	require.Equal(h.t, ledger.Verified, last.To)
	require.Contains(h.t, last.Reason, "handed-off tab")
	require.Contains(h.t, last.Reason, why)
	var rep *operator.ActionReport
	for i := range sum.Actions {
		if sum.Actions[i].ActionID == h.action {
			rep = &sum.Actions[i]
		}
	}
	require.NotNil(h.t, rep, "%+v", sum.Actions)
	require.Equal(h.t, operator.NoteVerifiedFromHandoff, rep.Note, "%+v", rep)
	require.Contains(h.t, rep.Reason, "handed-off tab")
	require.Zero(h.t, sum.Counts["verified"], "browserop published nothing itself: %+v", sum.Counts)
}

// again runs one more pass and checks nothing more was published.
func (h *handoff) again() {
	h.t.Helper()
	h.pass()
	require.Len(h.t, h.posts(1), 1, "still one post after another pass")
	require.Equal(h.t, ledger.Verified, h.w.action(h.action).Status)
	h.w.checkBooks()
}

// Order A: the person presses Post in the handed-off tab, then confirms.
// The pass closes that tab with proof, finds the post (not in the
// baseline taken when the tab was prepared) and verifies the action:
// it publishes nothing.
func TestHandoffOrderAPostThenConfirm(t *testing.T) {
	for _, mode := range handoffModes {
		t.Run(mode, func(t *testing.T) {
			h := newHandoff(t, mode, "order A: posted by the person, then confirmed")
			require.NoError(t, h.pressPost())
			require.Len(t, h.posts(1), 1, "the person's post")
			h.confirm()
			sum := h.pass()
			h.requireVerifiedFromHandoff(sum, "published from the handed-off tab")
			h.requireTabClosed()
			h.again()
		})
	}
}

// Order B: the person confirms, then presses Post in the handed-off tab,
// then the pass runs: as order A.
func TestHandoffOrderBConfirmThenPost(t *testing.T) {
	for _, mode := range handoffModes {
		t.Run(mode, func(t *testing.T) {
			h := newHandoff(t, mode, "order B: confirmed, then posted by the person")
			h.confirm()
			require.NoError(t, h.pressPost())
			require.Len(t, h.posts(1), 1, "the person's post")
			sum := h.pass()
			h.requireVerifiedFromHandoff(sum, "published from the handed-off tab")
			h.requireTabClosed()
			h.again()
		})
	}
}

// Order C: the person confirms, the pass publishes, then the person
// presses Post in the handed-off tab. The pass closed that tab with proof
// before it published, so there is no second copy left to press.
func TestHandoffOrderCConfirmPublishThenPost(t *testing.T) {
	for _, mode := range handoffModes {
		t.Run(mode, func(t *testing.T) {
			h := newHandoff(t, mode, "order C: confirmed, published, then pressed again")
			h.confirm()
			sum := h.pass()
			require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
			require.Equal(t, ledger.Verified, h.w.action(h.action).Status)
			pressed := h.pressPost()
			time.Sleep(time.Second) // a press that went through has committed by now
			require.Len(t, h.posts(1), 1, "exactly one post")
			require.Error(t, pressed, "the handed-off tab is gone: nothing is left to press")
			h.requireTabClosed()
			h.again()
		})
	}
}

// Order D: the person presses Post in the handed-off tab, then declines.
// The post is on the site, so the action is verified, never failed
// (docs/design.md invariant 9), and the reason says what happened.
func TestHandoffOrderDPostThenDecline(t *testing.T) {
	for _, mode := range handoffModes {
		t.Run(mode, func(t *testing.T) {
			h := newHandoff(t, mode, "order D: posted by the person, then declined")
			require.NoError(t, h.pressPost())
			require.Len(t, h.posts(1), 1, "the person's post")
			h.decline()
			sum := h.pass()
			h.requireVerifiedFromHandoff(sum, "before declining")
			h.requireTabClosed()
			h.again()
		})
	}
}

// handoffNotes lists the notes of a summary's action reports, for
// messages.
func handoffNotes(sum *operator.Summary) string {
	var out []string
	for _, r := range sum.Actions {
		out = append(out, string(r.Note)+": "+r.Reason)
	}
	return strings.Join(out, "; ")
}

// The person took the handed-off tab to another page (an address typed),
// then confirmed. The tab is theirs and stays open, and it may still hold
// the prepared form (its history does): nothing is published while it is
// open, and the person reads why. Once they close it, the next pass
// proves it gone, looks, and publishes once.
func TestHandoffHeldWhileTheTabIsElsewhere(t *testing.T) {
	for _, mode := range handoffModes {
		t.Run(mode, func(t *testing.T) {
			h := newHandoff(t, mode, "held while the tab is elsewhere")
			ctx := context.Background()
			require.NoError(t, h.person(chromedp.Navigate(h.w.base+"/home")))
			h.confirm()
			sum := h.pass()
			require.Equal(t, 1, sum.Counts["handoff_held"], "%s", handoffNotes(sum))
			require.Empty(t, h.w.effects(""), "nothing is published while the tab may hold the form")
			require.Equal(t, ledger.Planned, h.w.action(h.action).Status)
			rec, err := h.w.db.GetTab(ctx, h.rec.ID)
			require.NoError(t, err)
			require.Equal(t, ledger.TabHandoff, rec.State, "the person's tab and its record are left as they are")
			inv, err := h.w.b.Targets(ctx)
			require.NoError(t, err)
			require.True(t, inv.Has(browser.TargetID(h.rec.TargetID)), "the tab is left open")
			st, err := h.svc.Get(ctx, h.task)
			require.NoError(t, err)
			require.Contains(t, st.Actions[0].Held, "on another page", "the person reads why")
			require.Contains(t, st.Actions[0].Held, "close that tab")

			sum = h.pass()
			require.Equal(t, 1, sum.Counts["handoff_held"], "still held: %s", handoffNotes(sum))
			require.Empty(t, h.w.effects(""))

			// The person closes it.
			require.NoError(t, h.w.b.Adopt(ctx, browser.TargetID(h.rec.TargetID)))
			_, err = h.w.b.CloseTarget(ctx, browser.TargetID(h.rec.TargetID))
			require.NoError(t, err)
			sum = h.pass()
			require.Equal(t, 1, sum.Counts["verified"], "%s", handoffNotes(sum))
			require.Len(t, h.posts(1), 1, "published once")
			rec, err = h.w.db.GetTab(ctx, h.rec.ID)
			require.NoError(t, err)
			require.Equal(t, ledger.TabMissing, rec.State, "proven gone from a complete inventory")
			st, err = h.svc.Get(ctx, h.task)
			require.NoError(t, err)
			require.Empty(t, st.Actions[0].Held)
			h.again()
		})
	}
}

// The person changed the prepared text in the handed-off tab and pressed
// Post, then confirmed. What the tab's landing shows is not the intent, so
// it neither verifies the action nor lets it be published: it is
// ambiguous, for the person to settle, and nothing is published.
func TestHandoffPersonChangedTheText(t *testing.T) {
	h := newHandoff(t, "launch", "the text as the agent wrote it")
	require.NoError(t, h.person(
		chromedp.SetValue(chromedp.CSS("textarea#compose-text"), "the text as the person rewrote it"),
		chromedp.Click(chromedp.CSS("button#compose-submit"))))
	require.Len(t, h.posts(1), 1, "the person's post")
	h.confirm()
	sum := h.pass()
	require.Equal(t, operator.OutcomeNeedsPerson, sum.Outcome, "%s", handoffNotes(sum))
	a := h.w.action(h.action)
	require.Equal(t, ledger.Ambiguous, a.Status)
	require.Contains(t, a.FailureReason, "the person may have published it from the tab handed to them")
	require.Len(t, h.posts(1), 1, "nothing more was published")
	require.Equal(t, "the text as the person rewrote it", h.w.effects(demosite.EffectPost)[0].Text)
	h.requireTabClosed()
}
