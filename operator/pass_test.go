package operator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/budgets"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/kind"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

const fullCalendar = `entries:
  - {id: hello, site: demo, actor: alice, type: post, at: "{at}", text: "Hello, world"}
  - {id: story, site: demo, actor: alice, type: thread, at: "{at}", parts: ["one of three", "two of three", "three of three"]}
  - {id: answer, site: demo, actor: alice, type: reply, at: "{at}", target: "{base}/p/1", text: "a reply"}
  - {id: fav, site: demo, actor: alice, type: like, at: "{at}", target: "{base}/p/1"}
  - {id: carol, site: demo, actor: alice, type: follow, at: "{at}", target: "{base}/u/carol"}
`

func TestPassPublishesOnceAndVerifies(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	bobPost := w.srv.SeedPost("bob", "something to answer", time.Now().Add(-time.Hour))
	require.Equal(t, int64(1), bobPost)
	w.calendar(fullCalendar)

	sum := w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, 7, sum.Counts["verified"], "%+v", sum.Actions)
	require.NoError(t, sum.Err())

	posts, replies := w.effects(demosite.EffectPost), w.effects(demosite.EffectReply)
	require.Len(t, posts, 2, "the post and the thread's first part")
	require.Len(t, replies, 3, "the reply and the thread's two later parts")
	require.Len(t, w.effects(demosite.EffectLike), 1)
	require.Len(t, w.effects(demosite.EffectFollow), 1)
	for _, e := range w.effects("") {
		require.Equal(t, "alice", e.Author)
	}
	// The thread is a chain: each part replies to the one before.
	var parts []demosite.Effect
	for _, e := range w.effects("") {
		if strings.HasSuffix(e.Text, "of three") {
			parts = append(parts, e)
		}
	}
	require.Len(t, parts, 3)
	require.Zero(t, parts[0].ParentID)
	require.Equal(t, parts[0].PostID, parts[1].ParentID)
	require.Equal(t, parts[1].PostID, parts[2].ParentID)
	w.checkBooks()

	// Every task is finished and no tab is left open by the pass.
	tabs, err := w.db.ListTabs(context.Background(), "")
	require.NoError(t, err)
	require.NotEmpty(t, tabs)
	for _, tb := range tabs {
		require.Equal(t, ledger.TabClosedVerified, tb.State)
	}

	again := w.pass()
	require.Equal(t, operator.OutcomeOK, again.Outcome)
	require.Empty(t, again.Actions, "every entry is settled and its task done: nothing is revisited")
	require.Len(t, w.effects(""), 7, "the second pass publishes nothing")
	w.checkBooks()
}

// The editor starts with its saved draft: browserop did not type it, so
// nothing is typed there and the action is held for a person
// (docs/operator.md, "Field provenance").
func TestPassFaultEditorAppend(t *testing.T) {
	w := newWorld(t, demosite.Faults{EditorAppend: true})
	w.calendar("entries:\n" + post("p1", "exact text"))
	sum := w.pass()
	require.Equal(t, operator.OutcomeHardStop, sum.Outcome, "%+v", sum.Actions)
	require.Empty(t, w.effects(""), "nothing submitted")
	as := w.actions()
	require.Len(t, as, 1)
	require.Equal(t, ledger.Planned, as[0].Status)
	require.Equal(t, string(sites.StopFieldNotOurs), as[0].LastStop.Kind)
	require.True(t, as[0].ExecutingAt.IsZero(), "it never went executing")
	w.checkBooks()
}

// Faults after the server committed: the submit's outcome is unknown, and
// verification against the live timeline proves the one effect.
func TestPassFaultsAfterCommit(t *testing.T) {
	for name, f := range map[string]demosite.Faults{
		"DropAfterCommit": {DropAfterCommit: true},
		"Error500":        {Error500AfterCommit: true},
		"HangAfterCommit": {HangAfterCommit: true},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, f)
			w.calendar("entries:\n" + post("p1", "committed then lost"))
			sum := w.pass()
			require.Len(t, w.effects(demosite.EffectPost), 1, "exactly one effect")
			as := w.actions()
			require.Len(t, as, 1)
			require.Equal(t, ledger.Verified, as[0].Status, "%+v / %+v", sum.Actions, as[0])
			require.Equal(t, fmt.Sprintf("%s/p/%d", w.base, w.effects(demosite.EffectPost)[0].PostID), as[0].CanonicalResult)
			w.checkBooks()
			// And nothing more next time.
			w.srv.SetFaults(demosite.Faults{})
			w.pass()
			require.Len(t, w.effects(demosite.EffectPost), 1)
		})
	}
}

func TestPassHardStops(t *testing.T) {
	for name, f := range map[string]demosite.Faults{
		"SessionExpired": {SessionExpired: true},
		"Captcha":        {Captcha: true},
		"RateLimit":      {RateLimit: true},
		"Restricted":     {Restricted: true},
		"SwitchAccount":  {SwitchAccount: "bob"},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, f)
			w.calendar("entries:\n" + post("p1", "first") + post("p2", "second"))
			sum := w.pass()
			require.Equal(t, operator.OutcomeHardStop, sum.Outcome, "%+v", sum.Actions)
			require.ErrorIs(t, sum.Err(), errcode.ErrHardStop)
			require.Equal(t, errcode.ExitHardStop, errcode.Of(sum.Err()).Exit)
			require.Empty(t, w.effects(""), "no mutation after a hard stop")
			for _, a := range w.actions() {
				require.Equal(t, ledger.Planned, a.Status, "nothing was performed")
			}
			// With the screen gone, the next pass publishes each once.
			w.srv.SetFaults(demosite.Faults{})
			sum = w.pass()
			require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum.Actions)
			require.Len(t, w.effects(demosite.EffectPost), 2)
			w.checkBooks()
		})
	}
}

func TestPassOffsiteRedirect(t *testing.T) {
	w := newWorld(t, demosite.Faults{OffsiteRedirect: "http://127.0.0.1:9/elsewhere"})
	w.calendar("entries:\n" + post("p1", "redirected away") + post("p2", "never tried"))
	sum := w.pass()
	require.Equal(t, operator.OutcomeHardStop, sum.Outcome, "%+v", sum.Actions)
	require.Empty(t, w.effects(""))
	st := w.statuses()
	require.Equal(t, 1, st[ledger.Failed], "absent after the settle time: definitive (%v)", st)
	// The site is back: the failed intent is replanned once and published once.
	w.srv.SetFaults(demosite.Faults{})
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum.Actions)
	require.Len(t, w.effects(demosite.EffectPost), 2)
	for _, a := range w.actions() {
		require.Equal(t, ledger.Verified, a.Status)
	}
	w.checkBooks()
}

func TestPassDelayedVisibility(t *testing.T) {
	w := newWorld(t, demosite.Faults{VisibilityDelay: settle / 2})
	w.calendar("entries:\n" + post("p1", "shows up late"))
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "found once visible, inside the settle time: %+v", sum.Actions)
	require.Len(t, w.effects(demosite.EffectPost), 1)
	w.checkBooks()
}

func TestPassIdenticalOlderPost(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	old := w.srv.SeedPost("alice", "say it again", time.Now().Add(-time.Hour))
	w.calendar("entries:\n" + post("p1", "say it again"))
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum.Actions)
	as := w.actions()
	require.NotEqual(t, fmt.Sprintf("%s/p/%d", w.base, old), as[0].CanonicalResult, "the older post is not this action's result")
	require.Len(t, w.effects(demosite.EffectPost), 1, "it was published, once")
	w.checkBooks()
}

func TestPassInjectionChangesNothing(t *testing.T) {
	w := newWorld(t, demosite.Faults{Injection: true})
	w.srv.SeedPost("bob", "target", time.Now().Add(-time.Hour))
	w.calendar(fullCalendar)
	sum := w.pass()
	require.Equal(t, 7, sum.Counts["verified"], "%+v", sum.Actions)
	for _, e := range w.effects("") {
		require.Equal(t, "alice", e.Author)
	}
	require.Len(t, w.effects(""), 7)
	tasks, err := w.db.ListTasks(context.Background(), 0)
	require.NoError(t, err)
	for _, task := range tasks {
		require.Empty(t, task.Grants, "page text never grants")
		require.Len(t, task.Contract.Domains, 1)
	}
	w.checkBooks()
}

func TestPassSlowSite(t *testing.T) {
	w := newWorld(t, demosite.Faults{Slow: 300 * time.Millisecond})
	w.calendar("entries:\n" + post("p1", "slowly") + post("p2", "surely"))
	sum := w.pass()
	require.Equal(t, 2, sum.Counts["verified"], "%+v", sum.Actions)
	require.Len(t, w.effects(demosite.EffectPost), 2)
	w.checkBooks()
}

func TestPassCalendarEditAndMissed(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.calendar("entries:\n" + post("p1", "original text"))
	require.Equal(t, 1, w.pass().Counts["verified"])

	w.calendar("entries:\n" + post("p1", "edited text") +
		"  - {id: late, site: demo, actor: alice, type: post, at: \"" + time.Now().Add(-2*time.Hour).UTC().Format(time.RFC3339) + "\", text: stale}\n")
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["conflicts"], "%+v", sum)
	require.Equal(t, 1, sum.Counts["missed"], "%+v", sum.Actions)
	require.Len(t, w.effects(demosite.EffectPost), 1, "neither the edit nor the missed entry is published")
	require.Contains(t, strings.Join(sum.Problems, "\n"), `entry "p1" changed after an action of it was performed`)

	// A malformed file elsewhere is a problem; valid entries still run.
	require.NoError(t, os.WriteFile(filepath.Join(w.calDir, "broken.yaml"), []byte("entries: [\n"), 0o600))
	w.calendar("entries:\n" + post("p1", "original text") + post("p3", "new entry"))
	sum = w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum.Actions)
	require.Contains(t, strings.Join(sum.Problems, "\n"), "broken.yaml:1")
	require.Len(t, w.effects(demosite.EffectPost), 2)
}

func TestPassPublishLate(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	w.cfg.PublishLate = true
	w.calendar("entries:\n  - {id: late, site: demo, actor: alice, type: post, at: \"" +
		time.Now().Add(-2*time.Hour).UTC().Format(time.RFC3339) + "\", text: late but wanted}\n")
	require.Equal(t, 1, w.pass().Counts["verified"])
	require.Len(t, w.effects(demosite.EffectPost), 1)
}

func TestPassBudgetLimits(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	var err error
	w.policy, err = budgetsPolicy(2)
	require.NoError(t, err)
	w.calendar("entries:\n" + post("a", "one") + post("b", "two") + post("c", "three"))
	sum := w.pass()
	require.Equal(t, 2, sum.Counts["verified"])
	require.Equal(t, 1, sum.Counts["budget_skips"], "%+v", sum.Actions)
	require.Len(t, w.effects(demosite.EffectPost), 2, "never past the limit")
	w.checkBooks()
}

func TestPassTwoRunnersOneActs(t *testing.T) {
	w := newWorld(t, demosite.Faults{Slow: 200 * time.Millisecond})
	w.calendar("entries:\n" + post("a", "one") + post("b", "two"))
	other, err := ledger.Open(context.Background(), w.db.Path(), ledger.Options{})
	require.NoError(t, err)
	defer other.Close()
	r2 := operator.NewRunner(other, []sites.Adapter{w.site}, w.policy, operator.Planner{}, w.connect(), w.cfg, nil)
	r1 := w.getRunner()
	type result struct {
		sum *operator.Summary
		err error
	}
	ch := make(chan result, 2)
	for _, r := range []*operator.Runner{r1, r2} {
		go func() {
			s, err := r.Pass(context.Background())
			ch <- result{s, err}
		}()
	}
	outcomes := map[string]int{}
	for range 2 {
		res := <-ch
		require.NoError(t, res.err)
		outcomes[res.sum.Outcome]++
	}
	require.Equal(t, map[string]int{operator.OutcomeOK: 1, operator.OutcomeLockedSkip: 1}, outcomes)
	require.Equal(t, errcode.ExitLocked, errcode.Of((&operator.Summary{Outcome: operator.OutcomeLockedSkip}).Err()).Exit)
	require.Len(t, w.effects(demosite.EffectPost), 2, "each post exactly once")
}

// A pass whose lease was taken over cannot record anything: its writes are
// fenced, and the action it left executing is reconciled by the new holder.
func TestPassStaleOperatorCannotCommit(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	w.calendar("entries:\n" + post("a", "taken over"))
	old, err := w.db.AcquireLease(ctx, "browser-operator", "old", time.Second)
	require.NoError(t, err)
	in := ledger.Intent{Type: "post", Actor: "alice", Payload: ledger.Payload{Intent: "calendar:x", Text: "x"}.JSON()}
	a, _, err := w.db.Reserve(ctx, old.Fence(), in)
	require.NoError(t, err)
	time.Sleep(1100 * time.Millisecond) // the old lease expires
	sum := w.pass()                     // the new operator takes over and publishes
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum.Actions)
	_, err = w.db.Transition(ctx, old.Fence(), a.ID, ledger.Change{To: ledger.Executing, Reason: "late"})
	require.ErrorIs(t, err, ledger.ErrStaleGeneration)
	got, err := w.db.GetAction(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.Planned, got.Status)
}

func TestPassReconcilesExecutingAfterCrash(t *testing.T) {
	ctx := context.Background()
	for name, happened := range map[string]bool{"EffectHappened": true, "EffectAbsent": false} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, demosite.Faults{})
			w.calendar("entries:\n" + post("crash", "was I published?"))
			// A first pass performs the post, then "crashes": its action is
			// left executing, as a SIGKILL after the click would leave it.
			l, err := w.db.AcquireLease(ctx, "browser-operator", "crashed", time.Minute)
			require.NoError(t, err)
			in := calendarIntent("crash", "was I published?")
			a, _, err := w.db.Reserve(ctx, l.Fence(), in)
			require.NoError(t, err)
			_, err = w.db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Executing, Reason: "then crashed", Budget: w.policy})
			require.NoError(t, err)
			if happened {
				// The click went out before the crash.
				w.publishDirectly("was I published?")
				require.Len(t, w.effects(demosite.EffectPost), 1)
			}
			// The crashed process never released; its lease expires.
			_, err = w.db.AcquireLease(ctx, "browser-operator", "crashed", time.Millisecond)
			require.NoError(t, err)
			time.Sleep(5 * time.Millisecond)

			sum := w.pass()
			require.Equal(t, 1, sum.Counts["reconciled"], "%+v", sum)
			got, err := w.db.GetAction(ctx, a.ID)
			require.NoError(t, err)
			evs, err := w.db.Events(ctx, a.ID)
			require.NoError(t, err)
			if happened {
				require.Equal(t, ledger.Verified, got.Status, "%+v", evs)
				require.Len(t, w.effects(demosite.EffectPost), 1, "reconciled, not re-performed")
			} else {
				// Absent after the settle time: failed definitively, then
				// replanned and published once, in the same pass.
				require.Len(t, w.effects(demosite.EffectPost), 1)
				require.Equal(t, ledger.Verified, got.Status, "%+v", evs)
				require.Equal(t, 2, got.Attempt)
			}
			sawAmbiguous := false
			for _, e := range evs {
				sawAmbiguous = sawAmbiguous || e.To == ledger.Ambiguous
			}
			require.True(t, sawAmbiguous, "an action found executing is ambiguous first")
		})
	}
}

func TestPassPlanner(t *testing.T) {
	for name, tc := range map[string]struct {
		script   string
		verified int
		problem  string
		quality  int
	}{
		"Garbage": {script: "echo 'post something about cats'", verified: 1, problem: "not the candidate schema"},
		"Huge":    {script: "head -c 3000000 /dev/zero | tr '\\0' 'x'", verified: 1, problem: "output exceeds"},
		"Hangs":   {script: "sleep 30", verified: 1, problem: "no answer within"},
		"Candidates": {script: `echo '{"candidates":[
			{"site":"demo","actor":"alice","type":"post","text":"planned by the model","score":0.9,"evidence":"asked"},
			{"site":"demo","actor":"alice","type":"post","text":"weak idea","score":0.1,"evidence":"meh"}]}'`, verified: 2, quality: 1},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, demosite.Faults{})
			p := filepath.Join(t.TempDir(), "planner.sh")
			require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\ncat >/dev/null\n"+tc.script+"\n"), 0o700))
			w.planner = operator.Planner{Command: []string{"/bin/sh", p}, Timeout: time.Second}
			w.calendar("entries:\n" + post("cal", "from the calendar"))
			sum := w.pass()
			require.Equal(t, tc.verified, sum.Counts["verified"], "%+v", sum)
			require.Equal(t, tc.quality, sum.Counts["quality_skips"])
			if tc.problem != "" {
				require.Contains(t, strings.Join(sum.Problems, "\n"), tc.problem)
			}
			require.Len(t, w.effects(demosite.EffectPost), tc.verified)
			tasks, err := w.db.ListTasks(context.Background(), 0)
			require.NoError(t, err)
			for _, task := range tasks {
				require.Equal(t, []string{"post"}, task.Contract.Capabilities, "the planner never widens authority")
			}
		})
	}
}

// calendarIntent is the ledger intent the operator builds for a calendar post.
func calendarIntent(id, text string) ledger.Intent {
	return ledger.Intent{Type: kind.Post, Format: kind.Post.Format(), Site: "demo", Actor: "alice",
		Payload: ledger.Payload{Intent: "calendar:" + id, Text: text}.JSON()}
}

// publishDirectly posts through the adapter in a tab of its own, outside
// any pass: the effect of a click whose pass then died.
func (w *world) publishDirectly(text string) {
	w.t.Helper()
	ctx := context.Background()
	tab, err := w.b.NewTab(ctx, "about:blank")
	require.NoError(w.t, err)
	defer w.b.CloseTab(ctx, tab)
	in := sites.Intent{Kind: kind.Post, Actor: "alice", Text: text}
	_, err = w.site.Open(ctx, tab, in)
	require.NoError(w.t, err)
	_, err = w.site.Fill(ctx, tab, in)
	require.NoError(w.t, err)
	require.NoError(w.t, w.site.Submit(ctx, tab, in))
}

func (w *world) connect() operator.ConnectFunc {
	return func(context.Context) (*browser.Browser, error) { return w.b, nil }
}

func budgetsPolicy(postLimit int) (budgets.Policy, error) {
	return budgets.NewPolicy(map[string]budgets.FormatLimit{budgets.PostText: {Max: postLimit, Window: 24 * time.Hour}}, nil)
}
