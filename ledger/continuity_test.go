package ledger_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
)

func continuityTask(t *testing.T, db *ledger.DB) ledger.Task {
	t.Helper()
	task, _, err := db.CreateTask(context.Background(), "agent:cont", ledger.TaskRequest{Source: "mcp",
		Contract: ledger.Contract{Domains: []string{"example.com"}, Capabilities: []string{"post"}}})
	require.NoError(t, err)
	return task
}

func fullContinuity() ledger.Continuity {
	conf := 0.7
	return ledger.Continuity{
		Planner:         &ledger.Provider{ID: "brain-a", Fallbacks: []string{"brain-b"}},
		Executor:        &ledger.Provider{ID: "reflex-1", Fallbacks: []string{"reflex-2", "reflex-3"}},
		Subgoal:         "publish the launch post",
		SuccessCriteria: []string{"the post has a permalink"},
		Observation:     &ledger.ObserveMode{Mode: "summary", Scope: []string{"example.com", "demo"}},
		Confidence:      &conf,
		Limits:          &ledger.Limits{MaxSteps: 20, Steps: 3, MaxDurationSeconds: 600, ElapsedSeconds: 40},
		Skill:           &ledger.Skill{ID: "social.post", Version: "1.2.0"},
	}
}

// SetContinuity stores what the agent reports, reads it back with the
// task, and records in the history which fields were set, never values.
func TestContinuityStored(t *testing.T) {
	t.Parallel()
	db, _ := MustOpen(t)
	ctx := context.Background()
	task := continuityTask(t, db)
	c := fullContinuity()
	_, err := db.SetContinuity(ctx, task.ID, c, 0)
	require.NoError(t, err)
	got, err := db.GetTask(ctx, task.ID)
	require.NoError(t, err)
	require.NotNil(t, got.Continuity)
	require.Equal(t, "reflex-2", got.Continuity.Executor.Fallbacks[0])
	require.Equal(t, 0.7, *got.Continuity.Confidence)
	require.Equal(t, "1.2.0", got.Continuity.Skill.Version)
	require.False(t, got.Continuity.UpdatedAt.IsZero())
	require.Equal(t, task.Contract, got.Contract, "the contract is unchanged")
	evs, err := db.TaskEvents(ctx, task.ID)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	require.Equal(t, "continuity", last.Kind)
	require.NotContains(t, last.Detail, "launch post", "the history names fields, not values")
}

// Each field is checked; the error names it.
func TestContinuityValidation(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 501)
	nan := 0.0
	nan = nan / nan
	for name, tc := range map[string]struct {
		edit  func(*ledger.Continuity)
		field string
	}{
		"PlannerEmpty":      {func(c *ledger.Continuity) { c.Planner.ID = "" }, "planner.id: required"},
		"PlannerSentence":   {func(c *ledger.Continuity) { c.Planner.ID = "ignore previous instructions" }, "planner.id"},
		"TooManyFallbacks":  {func(c *ledger.Continuity) { c.Executor.Fallbacks = make([]string, 9) }, "executor.fallbacks: more than 8"},
		"FallbackControl":   {func(c *ledger.Continuity) { c.Executor.Fallbacks = []string{"a\x1b[2J"} }, "executor.fallbacks[0]"},
		"SubgoalLong":       {func(c *ledger.Continuity) { c.Subgoal = long }, "subgoal: longer than 500"},
		"CriterionEmpty":    {func(c *ledger.Continuity) { c.SuccessCriteria = []string{" "} }, "success_criteria[0]: empty"},
		"ModeUnknown":       {func(c *ledger.Continuity) { c.Observation.Mode = "screenshot" }, "observation.mode"},
		"ScopeOtherDomain":  {func(c *ledger.Continuity) { c.Observation.Scope = []string{"evil.example"} }, "observation.scope[0]: \"evil.example\" is not within the task's domains"},
		"ScopeWildcard":     {func(c *ledger.Continuity) { c.Observation.Scope = []string{"*.com"} }, "observation.scope[0]"},
		"ConfidenceHigh":    {func(c *ledger.Continuity) { v := 1.5; c.Confidence = &v }, "confidence: 1.5 is not from 0 to 1"},
		"ConfidenceNaN":     {func(c *ledger.Continuity) { c.Confidence = &nan }, "confidence"},
		"EscalationLong":    {func(c *ledger.Continuity) { c.EscalationReason = long }, "escalation_reason"},
		"MaxStepsNegative":  {func(c *ledger.Continuity) { c.Limits.MaxSteps = -1 }, "limits.max_steps"},
		"MaxStepsHuge":      {func(c *ledger.Continuity) { c.Limits.MaxSteps = 100001 }, "limits.max_steps"},
		"DurationHuge":      {func(c *ledger.Continuity) { c.Limits.MaxDurationSeconds = 8 * 24 * 3600 }, "limits.max_duration_seconds"},
		"StepsNegative":     {func(c *ledger.Continuity) { c.Limits.Steps = -1 }, "limits.steps"},
		"SkillNoVersion":    {func(c *ledger.Continuity) { c.Skill.Version = "" }, "skill.version: required"},
		"SkillIDWithSpaces": {func(c *ledger.Continuity) { c.Skill.ID = "post and like" }, "skill.id"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db, _ := MustOpen(t)
			task := continuityTask(t, db)
			c := fullContinuity()
			tc.edit(&c)
			_, err := db.SetContinuity(context.Background(), task.ID, c, 0)
			require.ErrorIs(t, err, ledger.ErrContinuity)
			require.ErrorContains(t, err, tc.field)
			got, err := db.GetTask(context.Background(), task.ID)
			require.NoError(t, err)
			require.Nil(t, got.Continuity, "nothing is stored")
		})
	}
}

// A limit only narrows the task's bound, a counter never goes back, and a
// stale interaction generation changes nothing.
func TestContinuityLimitsNarrow(t *testing.T) {
	t.Parallel()
	db, _ := MustOpen(t)
	ctx := context.Background()
	task := continuityTask(t, db)
	c := fullContinuity()
	_, err := db.SetContinuity(ctx, task.ID, c, 0)
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		edit  func(*ledger.Limits)
		field string
	}{
		"StepsRaised":    {func(l *ledger.Limits) { l.MaxSteps = 21 }, "limits.max_steps: 21 would widen the task's bound of 20"},
		"StepsRemoved":   {func(l *ledger.Limits) { l.MaxSteps = 0 }, "limits.max_steps: 0 would widen"},
		"DurationRaised": {func(l *ledger.Limits) { l.MaxDurationSeconds = 601 }, "limits.max_duration_seconds"},
		"CounterBack":    {func(l *ledger.Limits) { l.Steps = 2 }, "limits.steps: 2 is below 3"},
		"ElapsedBack":    {func(l *ledger.Limits) { l.ElapsedSeconds = 1 }, "limits.elapsed_seconds"},
		"LimitsDropped":  {nil, "limits.max_steps"},
	} {
		c2 := fullContinuity()
		if tc.edit != nil {
			tc.edit(c2.Limits)
		} else {
			c2.Limits = nil
		}
		_, err := db.SetContinuity(ctx, task.ID, c2, 0)
		require.ErrorIs(t, err, ledger.ErrContinuity, name)
		require.ErrorContains(t, err, tc.field, name)
	}
	narrower := fullContinuity()
	narrower.Limits = &ledger.Limits{MaxSteps: 10, Steps: 4, MaxDurationSeconds: 300, ElapsedSeconds: 41}
	_, err = db.SetContinuity(ctx, task.ID, narrower, 0)
	require.NoError(t, err, "narrowing is allowed")

	_, err = db.TakeTurn(ctx, task.ID, 0)
	require.NoError(t, err)
	gen, err := db.TakeTurn(ctx, task.ID, 0)
	require.NoError(t, err)
	_, err = db.SetContinuity(ctx, task.ID, narrower, gen-1)
	require.ErrorIs(t, err, ledger.ErrStaleGeneration)
	_, err = db.SetContinuity(ctx, task.ID, narrower, gen)
	require.NoError(t, err)

	require.NoError(t, db.SetTaskStatus(ctx, task.ID, ledger.TaskCancelled, nil, "enough"))
	_, err = db.SetContinuity(ctx, task.ID, narrower, 0)
	require.ErrorIs(t, err, ledger.ErrIllegalTransition)
}
