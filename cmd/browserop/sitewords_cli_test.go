package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
)

// The person's CLI shows what the site said of a failure (kept apart
// from the reason, which agents and logs get): `actions show`, its JSON,
// and `tasks show`. (operator's TestSiteWordsStayWithThePerson holds the
// agents' side with a real refusal.)
func TestCLIShowsTheSitesWords(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	task, _, err := db.CreateTask(ctx, "agent:words", ledger.TaskRequest{Title: "words", Source: "api",
		Contract: ledger.Contract{Domains: []string{"127.0.0.1"}, Capabilities: []string{"post"}}})
	require.NoError(t, err)
	l, err := db.AcquireLease(ctx, "browser-operator", "seed", time.Minute)
	require.NoError(t, err)
	a, _, err := db.Reserve(ctx, l.Fence(), ledger.Intent{TaskID: task.ID, Type: "post", Site: "demo", Actor: "alice",
		Payload: []byte(`{"intent":"task:x","text":"hi"}`)})
	require.NoError(t, err)
	_, err = db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Executing, Reason: "performing once"})
	require.NoError(t, err)
	const marker = "MARKER-5d1e the site says no"
	_, err = db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Failed, Class: ledger.Definitive,
		Reason: "the site refused the post (validation, status 400); nothing was created", SiteWords: `"` + marker + `"`})
	require.NoError(t, err)
	got, err := db.GetAction(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, `"`+marker+`"`, got.FailureSiteWords)
	evs, err := db.Events(ctx, a.ID)
	require.NoError(t, err)
	for _, ev := range evs {
		require.NotContains(t, ev.Reason, marker, "the history holds the reason only")
	}
	require.NoError(t, db.Close())

	code, out, errs := c.run("actions", "show", a.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "site said:")
	require.Contains(t, out, marker)
	code, out, errs = c.run("--json", "actions", "show", a.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, `"failure_site_words"`)
	require.Contains(t, out, marker)
	code, out, errs = c.run("tasks", "show", task.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "the site said \""+marker)
}

// `tasks show` prints the tab records the task used (record, state,
// epoch, origin; never a target id) and the agent's continuity, its
// words escaped.
func TestTasksShowTabsAndContinuity(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	task, _, err := db.CreateTask(ctx, "agent:cont", ledger.TaskRequest{Title: "cont", Source: "mcp",
		Contract: ledger.Contract{Domains: []string{"127.0.0.1"}, Capabilities: []string{"post"}}})
	require.NoError(t, err)
	l, err := db.AcquireLease(ctx, "browser-operator", "seed", time.Minute)
	require.NoError(t, err)
	rec, err := db.RecordTab(ctx, l.Fence(), ledger.Tab{RunID: "run_x", TargetID: "RAWTARGET0123", URL: "http://127.0.0.1:8787/compose", BindingHash: "bh"})
	require.NoError(t, err)
	require.NoError(t, db.UseTab(ctx, l.Fence(), task.ID, rec.ID))
	conf := 0.5
	_, err = db.SetContinuity(ctx, task.ID, ledger.Continuity{Planner: &ledger.Provider{ID: "brain-a", Fallbacks: []string{"brain-b"}},
		Subgoal: "say hello \u202e", Confidence: &conf, Limits: &ledger.Limits{MaxSteps: 9, Steps: 2},
		Skill: &ledger.Skill{ID: "social.post", Version: "1.0"}}, 0)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	code, out, errs := c.run("tasks", "show", task.ID)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "tab record 1: live, inspection epoch 1 (first used in 1), http://127.0.0.1:8787")
	require.NotContains(t, out, "RAWTARGET0123")
	require.Contains(t, out, "planner brain-a (then brain-b)")
	require.Contains(t, out, `subgoal: say hello \u202e`)
	require.Contains(t, out, "confidence 0.50")
	require.Contains(t, out, "steps 2 of 9")
	require.Contains(t, out, "skill social.post version 1.0")
}
