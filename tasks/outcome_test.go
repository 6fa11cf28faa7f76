package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// TestEffectReasons: an action not done (effect_state not_done, kept for
// clients) says why its effect is definitely absent, from its history:
// which status it failed from and by whom, its confirmation, its class
// and its task. The intent's outcome says the same, and an intent a
// cancel left unperformed is abandoned.
func TestEffectReasons(t *testing.T) {
	ctx := context.Background()
	db, err := ledger.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	svc := tasks.New(db, nil, nil)
	l, err := db.AcquireLease(ctx, "browser-operator", "test", time.Hour)
	require.NoError(t, err)
	f := l.Fence()
	step := func(id string, c ledger.Change) {
		t.Helper()
		_, err := db.Transition(ctx, f, id, c)
		require.NoError(t, err)
	}
	executing := ledger.Change{To: ledger.Executing, Reason: "performing once"}
	failed := func(class ledger.FailureClass, why string) ledger.Change {
		return ledger.Change{To: ledger.Failed, Class: class, Reason: why}
	}
	for _, tc := range []struct {
		name   string
		cancel bool // the task is cancelled before the action fails
		play   func(a ledger.Action)
		want   string
	}{
		{name: "RefusedAfterTheClick", want: tasks.ReasonProvenAbsent, play: func(a ledger.Action) {
			step(a.ID, executing)
			step(a.ID, failed(ledger.Definitive, "refused by the site"))
		}},
		{name: "ReconciledAbsent", want: tasks.ReasonProvenAbsent, play: func(a ledger.Action) {
			step(a.ID, executing)
			step(a.ID, ledger.Change{To: ledger.Ambiguous, Reason: "the answer timed out"})
			step(a.ID, failed(ledger.Definitive, "absent from a complete, settled view"))
		}},
		{name: "AbsentByPerson", want: tasks.ReasonAbsentByPerson, play: func(a ledger.Action) {
			step(a.ID, executing)
			step(a.ID, ledger.Change{To: ledger.Ambiguous, Reason: "the answer timed out"})
			_, err := svc.Resolve(ctx, a.ID, tasks.Resolution{Reason: "not on my profile"})
			require.NoError(t, err)
		}},
		{name: "RejectedByModerators", want: tasks.ReasonRejectedByModerators, play: func(a ledger.Action) {
			step(a.ID, executing)
			step(a.ID, ledger.Change{To: ledger.Moderated, Reason: "held for moderation"})
			_, err := svc.Resolve(ctx, a.ID, tasks.Resolution{Reason: "the moderators rejected it"})
			require.NoError(t, err)
		}},
		{name: "Declined", want: tasks.ReasonDeclined, play: func(a ledger.Action) {
			_, err := db.RequestConfirmation(ctx, f, a.ID)
			require.NoError(t, err)
			_, err = svc.Decline(ctx, a.ID, "person (test)", "not this one")
			require.NoError(t, err)
			step(a.ID, failed(ledger.Abandoned, "declined by person (test)"))
		}},
		{name: "Cancelled", cancel: true, want: tasks.ReasonAbandoned, play: func(a ledger.Action) {
			step(a.ID, failed(ledger.Abandoned, "nothing was clicked: the task was cancelled"))
		}},
		{name: "CancelledRightBeforeTheClick", want: tasks.ReasonAbandoned, play: func(a ledger.Action) {
			step(a.ID, executing)
			require.NoError(t, db.SetTaskStatus(ctx, a.TaskID, ledger.TaskCancelled, nil, "cancelled"))
			step(a.ID, failed(ledger.Abandoned, "nothing was clicked: the task was cancelled"))
		}},
		{name: "DeclinedAfterTheHandoff", want: tasks.ReasonDeclined, play: func(a ledger.Action) {
			_, err := db.RequestConfirmation(ctx, f, a.ID)
			require.NoError(t, err)
			_, err = svc.Decline(ctx, a.ID, "person (test)", "not this one")
			require.NoError(t, err)
			step(a.ID, executing)
			step(a.ID, failed(ledger.Abandoned, "declined by person (test); nothing of it is on the site"))
		}},
		{name: "StepFailed", want: tasks.ReasonNeverPerformed, play: func(a ledger.Action) {
			step(a.ID, failed(ledger.Definitive, "a step before the click failed"))
		}},
		{name: "Missed", want: tasks.ReasonNeverPerformed, play: func(a ledger.Action) {
			step(a.ID, failed(ledger.Abandoned, "missed: due more than 1h ago; not published late"))
		}},
		{name: "MissedThenCancelled", want: tasks.ReasonNeverPerformed, play: func(a ledger.Action) {
			step(a.ID, failed(ledger.Abandoned, "missed: due more than 1h ago; not published late"))
			require.NoError(t, db.SetTaskStatus(ctx, a.TaskID, ledger.TaskCancelled, nil, "cancelled after"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "calendar:" + tc.name
			input, _ := json.Marshal(map[string]string{"site": "demo", "actor": "alice", "type": "post", "text": "t"})
			task, _, err := db.CreateTask(ctx, key, ledger.TaskRequest{Title: tc.name, Source: tasks.SourceCalendar,
				Contract: ledger.Contract{Domains: []string{"127.0.0.1"}, Capabilities: []string{"post"}}, Input: input})
			require.NoError(t, err)
			a, _, err := db.Reserve(ctx, f, ledger.Intent{TaskID: task.ID, IntentID: key, Type: "post", Format: "post_text",
				Site: "demo", Actor: "alice", Payload: []byte(fmt.Sprintf(`{"intent":%q,"text":"t"}`, key))})
			require.NoError(t, err)
			if tc.cancel {
				require.NoError(t, db.SetTaskStatus(ctx, task.ID, ledger.TaskCancelled, nil, "cancelled"))
			}
			tc.play(a)

			st, err := svc.Get(ctx, task.ID)
			require.NoError(t, err)
			require.Len(t, st.Actions, 1)
			require.Equal(t, "not_done", st.Actions[0].Effect, "the wire value is kept")
			require.Equal(t, tc.want, st.Actions[0].EffectReason)
			res := st.Result
			if st.Status != ledger.TaskCancelled {
				// Settled (at most one attempt): done, with its result.
				task, err = db.GetTask(ctx, task.ID)
				require.NoError(t, err)
				done, err := tasks.CompleteIfSettled(ctx, db, task, 1)
				require.NoError(t, err)
				require.True(t, done)
				task, err = db.GetTask(ctx, task.ID)
				require.NoError(t, err)
				res = &tasks.Result{}
				require.NoError(t, json.Unmarshal(task.Result, res))
			}
			require.NotNil(t, res)
			require.Len(t, res.Intents, 1)
			require.Equal(t, tasks.OutcomeNotDone, res.Intents[0].Outcome)
			require.Equal(t, tc.want, res.Intents[0].Reason)
		})
	}
	t.Run("CancelledBeforeItWasPerformed", func(t *testing.T) {
		key := "calendar:never"
		input, _ := json.Marshal(map[string]string{"site": "demo", "actor": "alice", "type": "post", "text": "t"})
		task, _, err := db.CreateTask(ctx, key, ledger.TaskRequest{Source: tasks.SourceCalendar,
			Contract: ledger.Contract{Domains: []string{"127.0.0.1"}, Capabilities: []string{"post"}}, Input: input})
		require.NoError(t, err)
		_, _, err = db.Reserve(ctx, f, ledger.Intent{TaskID: task.ID, IntentID: key, Type: "post", Site: "demo", Actor: "alice",
			Payload: []byte(`{"intent":"calendar:never","text":"t"}`)})
		require.NoError(t, err)
		st, err := svc.Cancel(ctx, task.ID, "no longer wanted")
		require.NoError(t, err)
		require.Equal(t, "pending", st.Actions[0].Effect)
		require.Empty(t, st.Actions[0].EffectReason, "only a not_done action has one")
		require.Equal(t, tasks.ReasonAbandoned, st.Result.Intents[0].Reason)
	})
}
