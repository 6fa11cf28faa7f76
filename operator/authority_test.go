package operator_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

// A task bound to 1 publishes exactly one post, however many intents its
// agent submits at once.
func TestTaskBoundEndToEnd(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	svc := w.tasks()
	req := w.contract("post")
	req.Contract.MaxSideEffects = 1
	task, _, err := svc.Agent().Create(ctx, "bound", req, "api")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var accepted atomic.Int32
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: fmt.Sprintf("bounded %d", i)}); err == nil {
				accepted.Add(1)
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, 1, accepted.Load(), "the bound holds where intents are accepted")
	w.pass()
	w.pass()
	require.Len(t, w.effects(demosite.EffectPost), 1, "the bound is 1")
	w.checkBooks()
}

// An agent's key "calendar:ID" does not stop calendar entry ID.
func TestCalendarEntryNotSquatted(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	req := w.contract("post")
	_, _, err := w.tasks().Agent().Create(ctx, "calendar:squatme", req, "api")
	require.NoError(t, err)
	w.calendar("entries:\n" + post("squatme", "not squatted"))
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
	require.Len(t, w.effects(demosite.EffectPost), 1)
}

// A ceiling narrowed after the intent was accepted stops the action before
// the click: it fails definitively with the reason, and nothing is posted.
func TestNarrowedCeilingStopsBeforeClick(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	svc := w.tasks()
	req := w.contract("post")
	task, _, err := svc.Agent().Create(ctx, "narrow", req, "api")
	require.NoError(t, err)
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "before the narrowing"})
	require.NoError(t, err)
	w.cfg.Ceiling = []string{"example.com"}
	w.pass()
	require.Empty(t, w.effects(""), "nothing was posted")
	acts := w.actions()
	require.Len(t, acts, 1)
	require.Equal(t, ledger.Failed, acts[0].Status)
	require.Equal(t, ledger.Definitive, acts[0].FailureClass)
	require.Contains(t, acts[0].FailureReason, "ceiling")
}

// A site whose origins left the task's authority (its adapter now points
// elsewhere) is refused before the click.
func TestRevokedSiteStopsBeforeClick(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	svc := w.tasks()
	req := w.contract("post")
	task, _, err := svc.Agent().Create(ctx, "revoked", req, "api")
	require.NoError(t, err)
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "site moved"})
	require.NoError(t, err)
	// The person points the demo site at another host: the task's
	// contract (the old host) no longer covers it.
	moved := demoAdapter(t, "http://localhost:1")
	w.runner = operator.NewRunner(w.db, []sites.Adapter{moved}, w.policy, w.planner, nil, w.cfg, nil)
	w.pass()
	require.Empty(t, w.effects(""))
	acts := w.actions()
	require.Len(t, acts, 1)
	require.Equal(t, ledger.Failed, acts[0].Status)
	require.Contains(t, acts[0].FailureReason, "outside the task's domains")
}

// A pass does not revisit settled intents: the second pass over a verified
// calendar entry and a verified agent intent reports nothing.
func TestSettledIntentsNotRevisited(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	svc := w.tasks()
	req := w.contract("post")
	task, _, err := svc.Agent().Create(ctx, "settled", req, "api")
	require.NoError(t, err)
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "agent post"})
	require.NoError(t, err)
	w.calendar("entries:\n" + post("cal", "calendar post"))
	sum := w.pass()
	require.Equal(t, 2, sum.Counts["verified"], "%+v", sum)
	again := w.pass()
	require.Empty(t, again.Actions, "settled intents are not revisited: %+v", again.Actions)
	require.Len(t, w.effects(""), 2)
}

// task_observe counts pending intents by intent, not by action: a verified
// thread of two parts and a new post intent leave one pending.
func TestObservePendingIntents(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	svc := w.tasks()
	req := w.contract("post", "thread")
	task, _, err := svc.Agent().Create(ctx, "observe", req, "mcp")
	require.NoError(t, err)
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Thread, Parts: []string{"one of two", "two of two"}})
	require.NoError(t, err)
	sum := w.pass()
	require.Equal(t, 2, sum.Counts["verified"], "%+v", sum)
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "new"})
	require.NoError(t, err)
	obs, err := svc.Observe(ctx, task.ID)
	require.NoError(t, err)
	require.Equal(t, 1, obs.PendingIntent)
}

// A finished task becomes done once its intents are settled; its result
// lists each intent with its outcome and permalink, and each action names
// its intent. A cancelled task reports what was done before the cancel.
func TestTaskFinishDoneWithResult(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	svc := w.tasks().Agent()
	req := w.contract("post", "thread")
	task, _, err := svc.Create(ctx, "finish", req, "api")
	require.NoError(t, err)
	post, err := svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "finished post"})
	require.NoError(t, err)
	thread, err := svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Thread, Parts: []string{"a of two", "b of two"}})
	require.NoError(t, err)
	require.NotEqual(t, post.SubmittedIntent, thread.SubmittedIntent)
	st, err := svc.Finish(ctx, task.ID, "all sent")
	require.NoError(t, err)
	require.Equal(t, ledger.TaskOpen, st.Status, "not done before its intents are settled")
	require.True(t, st.Finished)
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "after finish"})
	require.ErrorIs(t, err, errcode.ErrForbidden)

	sum := w.pass()
	require.Equal(t, 3, sum.Counts["verified"], "%+v", sum)
	st, err = svc.Get(ctx, task.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TaskDone, st.Status)
	require.NotNil(t, st.Result)
	require.Len(t, st.Result.Intents, 2)
	byID := map[string]tasks.IntentOutcome{}
	for _, o := range st.Result.Intents {
		byID[o.ID] = o
		require.Equal(t, tasks.OutcomeKnownComplete, o.Outcome)
	}
	require.NotEmpty(t, byID[post.SubmittedIntent].Permalink)
	require.Len(t, byID[thread.SubmittedIntent].Permalinks, 2)
	require.Equal(t, byID[thread.SubmittedIntent].Permalinks[0], byID[thread.SubmittedIntent].Permalink)
	for _, a := range st.Actions {
		require.Contains(t, []string{post.SubmittedIntent, thread.SubmittedIntent}, a.IntentID, "every action names its intent")
		require.Contains(t, byID[a.IntentID].Actions, a.ID)
	}
	again := w.pass()
	require.Empty(t, again.Actions, "a done task is not revisited")

	// Cancelled after one of two intents: the result says which was done.
	other, _, err := svc.Create(ctx, "cancel", req, "api")
	require.NoError(t, err)
	done, err := svc.Submit(ctx, other.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "before the cancel"})
	require.NoError(t, err)
	w.pass()
	never, err := svc.Submit(ctx, other.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "never posted"})
	require.NoError(t, err)
	st, err = svc.Cancel(ctx, other.ID, "enough")
	require.NoError(t, err)
	require.Equal(t, ledger.TaskCancelled, st.Status)
	outcomes := map[string]string{}
	for _, o := range st.Result.Intents {
		outcomes[o.ID] = o.Outcome
	}
	require.Equal(t, tasks.OutcomeKnownComplete, outcomes[done.SubmittedIntent])
	require.Equal(t, tasks.OutcomeNotDone, outcomes[never.SubmittedIntent])
	w.pass()
	require.Len(t, w.effects(""), 4, "three of the finished task, one before the cancel")
	w.checkBooks()
}

// cancelOnFill is the demo adapter, with the person cancelling the task
// while the payload is being prepared: after the first authority check
// and before the click.
type cancelOnFill struct {
	sites.Adapter
	cancel func()
}

func (c cancelOnFill) Fill(ctx context.Context, tab *browser.Tab, in sites.Intent) (string, error) {
	got, err := c.Adapter.Fill(ctx, tab, in)
	c.cancel()
	return got, err
}

// The task is read again right before the click: cancelled after its
// payload was prepared (and after the action went executing), nothing is
// clicked and the action ends abandoned.
func TestCancelledBeforeClickIsNotClicked(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	svc := w.tasks()
	req := w.contract("post")
	task, _, err := svc.Agent().Create(ctx, "late-cancel", req, "api")
	require.NoError(t, err)
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "cancelled at the last moment"})
	require.NoError(t, err)
	site := cancelOnFill{Adapter: w.site, cancel: func() {
		_, err := svc.Cancel(ctx, task.ID, "changed my mind")
		require.NoError(t, err)
	}}
	w.useRunner(nil, site)
	w.pass()
	require.Empty(t, w.effects(""), "nothing was clicked")
	acts := w.actions()
	require.Len(t, acts, 1)
	require.Equal(t, ledger.Failed, acts[0].Status)
	require.Equal(t, ledger.Abandoned, acts[0].FailureClass)
	require.False(t, acts[0].ExecutingAt.IsZero(), "it had gone executing: the check right before the click refused it")
	require.Contains(t, acts[0].FailureReason, "the task was cancelled")
	st, err := svc.Get(ctx, task.ID)
	require.NoError(t, err)
	require.Equal(t, "not_done", st.Actions[0].Effect)
	require.Equal(t, tasks.ReasonAbandoned, st.Actions[0].EffectReason, "abandoned, not proven absent: nothing was clicked")
}

// A calendar entry's task takes no other intent: one submitted to it (the
// person's view sees it) would be left out of its result and dropped when
// it ends. Refused, and the person's view creates person tasks only.
func TestEntryTaskTakesNoSubmittedIntent(t *testing.T) {
	w := newWorld(t, demosite.Faults{Captcha: true})
	ctx := context.Background()
	w.calendar("entries:\n" + post("cal", "the entry's own post"))
	w.pass() // stopped by the CAPTCHA: the entry's task stays open
	ts, err := w.db.ListTasks(ctx, 0, tasks.SourceCalendar)
	require.NoError(t, err)
	require.Len(t, ts, 1)
	require.Equal(t, ledger.TaskOpen, ts[0].Status)
	_, err = w.tasks().Submit(ctx, ts[0].ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "smuggled in"})
	require.ErrorIs(t, err, errcode.ErrForbidden)
	intents, err := w.db.TaskIntents(ctx, ts[0].ID)
	require.NoError(t, err)
	require.Empty(t, intents)

	req := w.contract("post")
	_, _, err = w.tasks().Create(ctx, "mine", req, tasks.SourceCalendar)
	require.Error(t, err, "the person's view records person tasks only")
}
