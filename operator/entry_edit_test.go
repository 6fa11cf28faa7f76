package operator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
)

// TestPassBudgetSkippedEntryCanBeEdited: an entry skipped for budget has
// had nothing performed; editing it is no conflict, and the edited
// version is what is published once the budget allows.
func TestPassBudgetSkippedEntryCanBeEdited(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	at := time.Now().Add(-time.Second)
	var err error
	w.policy, err = budgetsPolicy(1)
	require.NoError(t, err)
	fixedCalendar(w, at, "entries:\n"+post("a", "one")+post("b", "two, first version"))
	sum := w.pass()
	require.Equal(t, 1, sum.Counts["verified"])
	require.Equal(t, 1, sum.Counts["budget_skips"], "%+v", sum.Actions)

	fixedCalendar(w, at, "entries:\n"+post("a", "one")+post("b", "two, edited while skipped"))
	sum = w.pass()
	require.Zero(t, sum.Counts["conflicts"], "nothing of it was performed: %+v", sum)
	require.Equal(t, 1, sum.Counts["budget_skips"], "%+v", sum.Actions)
	require.Empty(t, sum.Problems)

	// The budget allows it again (a new day, or a raised limit).
	w.policy, err = budgetsPolicy(10)
	require.NoError(t, err)
	w.runner = nil
	sum = w.pass()
	require.Equal(t, 1, sum.Counts["verified"], "%+v", sum.Actions)
	var texts []string
	for _, e := range w.effects(demosite.EffectPost) {
		texts = append(texts, e.Text)
	}
	require.ElementsMatch(t, []string{"one", "two, edited while skipped"}, texts)
	w.checkBooks()
}

// TestPassEntryEditableUntilExecuting: an entry reserved but stopped before
// its click (a blocker screen) may be edited, and even edited back: the
// earlier versions' planned actions end abandoned and only the last version
// is published, once. After it was performed, an edit is a conflict.
func TestPassEntryEditableUntilExecuting(t *testing.T) {
	w := newWorld(t, demosite.Faults{Captcha: true})
	at := time.Now().Add(-time.Second)
	fixedCalendar(w, at, "entries:\n"+post("e", "version one"))
	sum := w.pass()
	require.Equal(t, operator.OutcomeHardStop, sum.Outcome)
	fixedCalendar(w, at, "entries:\n"+post("e", "version two"))
	sum = w.pass()
	require.Equal(t, operator.OutcomeHardStop, sum.Outcome)
	require.Zero(t, sum.Counts["conflicts"], "%+v", sum)
	fixedCalendar(w, at, "entries:\n"+post("e", "version one"))
	sum = w.pass()
	require.Zero(t, sum.Counts["conflicts"], "%+v", sum)

	require.NoError(t, w.srv.SetFaults(demosite.Faults{}))
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum.Actions)
	require.Equal(t, 1, sum.Counts["verified"])
	posts := w.effects(demosite.EffectPost)
	require.Len(t, posts, 1)
	require.Equal(t, "version one", posts[0].Text)
	byStatus := w.statuses()
	require.Equal(t, 1, byStatus[ledger.Verified])
	require.Equal(t, 2, byStatus[ledger.Failed], "the two superseded reservations")
	for _, a := range w.actions() {
		if a.Status == ledger.Failed {
			require.Equal(t, ledger.Abandoned, a.FailureClass)
			require.True(t, strings.HasPrefix(a.FailureReason, "superseded"), a.FailureReason)
			require.True(t, a.ExecutingAt.IsZero())
		}
	}
	revs, err := w.db.TaskRevisions(context.Background(), "calendar:e")
	require.NoError(t, err)
	require.Len(t, revs, 3)
	require.Equal(t, ledger.TaskCancelled, revs[0].Status)
	require.Equal(t, ledger.TaskCancelled, revs[1].Status)
	require.Equal(t, ledger.TaskDone, revs[2].Status, "its one intent is settled")

	// Performed: an edit now is a conflict, never published.
	fixedCalendar(w, at, "entries:\n"+post("e", "version three"))
	sum = w.pass()
	require.Equal(t, 1, sum.Counts["conflicts"], "%+v", sum)
	require.Len(t, w.effects(demosite.EffectPost), 1)
	// Restored: simply done, and not revisited.
	fixedCalendar(w, at, "entries:\n"+post("e", "version one"))
	sum = w.pass()
	require.Zero(t, sum.Counts["conflicts"], "%+v", sum)
	require.Empty(t, sum.Actions, "a done entry is not revisited: %+v", sum)
	require.Len(t, w.effects(demosite.EffectPost), 1)
	w.checkBooks()
}

// fixedCalendar writes the calendar like w.calendar, with {at} fixed, so
// that rewriting an entry changes only what the test changes.
func fixedCalendar(w *world, at time.Time, yaml string) {
	w.t.Helper()
	yaml = strings.ReplaceAll(yaml, "{base}", w.base)
	yaml = strings.ReplaceAll(yaml, "{at}", at.UTC().Format(time.RFC3339))
	require.NoError(w.t, os.WriteFile(filepath.Join(w.calDir, "cal.yaml"), []byte(yaml), 0o600))
}
