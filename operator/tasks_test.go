package operator_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/tasks"
)

func (w *world) tasks() *tasks.Service {
	return tasks.New(w.db, []sites.Adapter{w.site}, nil)
}

// contract is contract(caps...) on this world's demo site.
func (w *world) contract(caps ...string) tasks.CreateRequest {
	req := contract(caps...)
	req.Contract.Domains = []string{hostOf(w.base)}
	return req
}

func contract(caps ...string) tasks.CreateRequest {
	return tasks.CreateRequest{Title: "agent task", Contract: ledger.Contract{Domains: []string{"127.0.0.1"}, Capabilities: caps}}
}

func TestTaskIntentsArePerformedOnce(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	svc := w.tasks()
	req := w.contract("post", "like")
	task, created, err := svc.Agent().Create(ctx, "agent-key-1", req, "api")
	require.NoError(t, err)
	require.True(t, created)
	again, created, err := svc.Agent().Create(ctx, "agent-key-1", req, "api")
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, task.ID, again.ID)
	other := contract("post", "follow")
	other.Contract.Domains = req.Contract.Domains
	_, _, err = svc.Agent().Create(ctx, "agent-key-1", other, "api")
	require.ErrorIs(t, err, ledger.ErrConflict)

	in := intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "from an agent"}
	_, err = svc.Submit(ctx, task.ID, in)
	require.NoError(t, err)
	st, err := svc.Submit(ctx, task.ID, in) // a retry is the same intent
	require.NoError(t, err)
	require.Equal(t, 1, st.Intents)

	for name, bad := range map[string]intent.Request{
		"CapabilityNotAllowed": {Site: "demo", Actor: "alice", Type: intent.Reply, Target: w.base + "/p/1", Text: "x"},
		"TargetOutsideDomains": {Site: "demo", Actor: "alice", Type: intent.Like, Target: "http://evil.example/p/1"},
	} {
		_, err := svc.Submit(ctx, task.ID, bad)
		require.ErrorIs(t, err, errcode.ErrForbidden, name)
	}

	sum := w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
	require.Len(t, w.effects(demosite.EffectPost), 1)
	st, err = svc.Get(ctx, task.ID)
	require.NoError(t, err)
	require.Len(t, st.Actions, 1)
	require.Equal(t, "known_complete", st.Actions[0].Effect)

	w.pass()
	require.Len(t, w.effects(demosite.EffectPost), 1, "performed once across passes")

	// Cancel stops further mutations; done work stays done.
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "never"})
	require.NoError(t, err)
	st, err = svc.Cancel(ctx, task.ID, "enough")
	require.NoError(t, err)
	require.Equal(t, ledger.TaskCancelled, st.Status)
	w.pass()
	require.Len(t, w.effects(demosite.EffectPost), 1, "nothing after the cancel")
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "later"})
	require.ErrorIs(t, err, errcode.ErrForbidden)
}

func TestTaskConfirmation(t *testing.T) {
	for _, decision := range []string{"confirm", "decline"} {
		t.Run(decision, func(t *testing.T) {
			w := newWorld(t, demosite.Faults{})
			ctx := context.Background()
			svc := w.tasks()
			req := w.contract("post")
			req.Contract.Confirm = []string{"post"}
			task, _, err := svc.Agent().Create(ctx, "k", req, "mcp")
			require.NoError(t, err)
			_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "check me first"})
			require.NoError(t, err)

			sum := w.pass()
			require.Equal(t, 1, sum.Counts["needs_confirmation"], "%+v", sum)
			require.Empty(t, w.effects(""), "nothing is published before the person confirms")
			st, err := svc.Get(ctx, task.ID)
			require.NoError(t, err)
			require.Equal(t, "needs_confirmation", st.Actions[0].Effect)
			require.Equal(t, "waiting_for_confirmation", st.Interaction)
			// The prepared tab is the person's now, and stays open.
			tabs, err := w.db.ListTabs(ctx, task.ID)
			require.NoError(t, err)
			require.Len(t, tabs, 1)
			require.Equal(t, ledger.TabHandoff, tabs[0].State)
			inv, err := w.b.Targets(ctx)
			require.NoError(t, err)
			require.True(t, inv.Has(browserTarget(tabs[0].TargetID)), "the handed-off tab is left open")
			obs, err := svc.Observe(ctx, task.ID)
			require.NoError(t, err)
			require.Equal(t, "handoff", obs.Tab)
			require.Equal(t, []string{st.Actions[0].ID}, obs.Waiting)

			sum = w.pass()
			require.Equal(t, 1, sum.Counts["needs_confirmation"], "still waiting: %+v", sum)
			require.Empty(t, w.effects(""))

			actionID := st.Actions[0].ID
			if decision == "confirm" {
				_, err = svc.Confirm(ctx, actionID, "person (test)")
				require.NoError(t, err)
				_, err = svc.Decline(ctx, actionID, "person (test)", "changed my mind")
				require.ErrorIs(t, err, ledger.ErrIllegalTransition, "answered once")
				sum = w.pass()
				require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
				require.Len(t, w.effects(demosite.EffectPost), 1)
			} else {
				_, err = svc.Decline(ctx, actionID, "person (test)", "not this one")
				require.NoError(t, err)
				sum = w.pass()
				require.Equal(t, 1, sum.Counts["declined"], "%+v", sum)
				require.Empty(t, w.effects(""))
				a, err := w.db.GetAction(ctx, actionID)
				require.NoError(t, err)
				require.Equal(t, ledger.Failed, a.Status)
				require.Equal(t, ledger.Abandoned, a.FailureClass)
			}
			w.checkBooks()
		})
	}
}

func TestTaskGrantsWithinCeiling(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	svc := tasks.New(w.db, []sites.Adapter{w.site}, []string{hostOf(w.base), "*.media.example"})
	req := w.contract("post")
	task, _, err := svc.Agent().Create(ctx, "k", req, "api")
	require.NoError(t, err)
	_, err = svc.Grant(ctx, task.ID, "evil.example", "person")
	require.ErrorIs(t, err, errcode.ErrForbidden, "outside the ceiling")
	st, err := svc.Grant(ctx, task.ID, "cdn.media.example", "person")
	require.NoError(t, err)
	require.Len(t, st.Grants, 1)
	require.Equal(t, req.Contract, st.Contract, "the contract never changes")
	_, _, err = svc.Agent().Create(ctx, "k2", tasks.CreateRequest{Contract: ledger.Contract{Domains: []string{"evil.example"}, Capabilities: []string{"post"}}}, "api")
	require.ErrorIs(t, err, errcode.ErrForbidden, "a contract outside the ceiling")
}

func TestTaskAgentViewHidesThePersonsTasks(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	svc := w.tasks()
	mine, _, err := w.db.CreateTask(ctx, "calendar:x", ledger.TaskRequest{Source: "calendar",
		Contract: ledger.Contract{Domains: []string{hostOf(w.base)}, Capabilities: []string{"post"}}})
	require.NoError(t, err)
	req := w.contract("post")
	theirs, _, err := svc.Agent().Create(ctx, "agent", req, "mcp")
	require.NoError(t, err)

	agent := svc.Agent()
	_, err = agent.Get(ctx, mine.ID)
	require.ErrorIs(t, err, ledger.ErrNotFound)
	_, err = agent.Cancel(ctx, mine.ID, "no")
	require.ErrorIs(t, err, ledger.ErrNotFound)
	_, err = agent.Submit(ctx, mine.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "x"})
	require.ErrorIs(t, err, ledger.ErrNotFound)
	list, err := agent.List(ctx, 0)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, theirs.ID, list[0].ID)
	all, err := svc.List(ctx, 0)
	require.NoError(t, err)
	require.Len(t, all, 2, "the person sees every task")
	got, err := w.db.GetTask(ctx, mine.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.TaskOpen, got.Status, "the agent's cancel changed nothing")

	_, err = svc.Cancel(ctx, theirs.ID, "done")
	require.NoError(t, err)
	_, err = svc.Grant(ctx, theirs.ID, hostOf(w.base), "person")
	require.ErrorIs(t, err, errcode.ErrForbidden, "no grant on a cancelled task")
}

// Page text and redirects never widen a task's authority: injected
// instructions create no grant, and a submission that redirects off the
// site stops the pass.
func TestTaskAuthorityUnderInjectionAndRedirect(t *testing.T) {
	w := newWorld(t, demosite.Faults{Injection: true})
	ctx := context.Background()
	svc := w.tasks()
	req := w.contract("post")
	task, _, err := svc.Agent().Create(ctx, "k", req, "api")
	require.NoError(t, err)
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "read the timeline"})
	require.NoError(t, err)
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum)
	st, err := svc.Get(ctx, task.ID)
	require.NoError(t, err)
	require.Empty(t, st.Grants, "page text never grants")
	require.Equal(t, req.Contract, st.Contract)

	w.srv.SetFaults(demosite.Faults{OffsiteRedirect: "http://127.0.0.1:9/elsewhere"})
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "sent away"})
	require.NoError(t, err)
	_, err = svc.Submit(ctx, task.ID, intent.Request{Site: "demo", Actor: "alice", Type: intent.Post, Text: "not tried"})
	require.NoError(t, err)
	sum = w.pass()
	require.Equal(t, operator.OutcomeHardStop, sum.Outcome, "%+v", sum)
	require.Len(t, w.effects(demosite.EffectPost), 1, "nothing more was published")
	st, err = svc.Get(ctx, task.ID)
	require.NoError(t, err)
	require.Empty(t, st.Grants, "a redirect never grants")
}
