package operator_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
)

// A login stop holds the site's actions planned, and the ledger keeps on
// each what held it: the stop's kind, its cause as the pass reported it,
// the pass and the time. An action the pass does not even reach (its site
// already stopped) is recorded with the same stop and cause, this pass's.
// Once someone is signed in again, the next pass performs both, and the
// stop is gone from them.
func TestHeldActionsRecordTheirStop(t *testing.T) {
	w := newWorld(t, demosite.Faults{SessionExpired: true})
	now := time.Now()
	earlier, later := now.Add(-2*time.Second).UTC().Format(time.RFC3339), now.Add(-time.Second).UTC().Format(time.RFC3339)
	entryAt := func(id, at, text string) string {
		return fmt.Sprintf("  - {id: %s, site: demo, actor: alice, type: post, at: %q, text: %q}\n", id, at, text)
	}
	w.calendar("entries:\n" + entryAt("later", later, "held, then published"))

	byEntry := func(sum *operator.Summary) map[string]operator.ActionReport {
		out := map[string]operator.ActionReport{}
		for _, r := range sum.Actions {
			out[r.Entry] = r
		}
		return out
	}
	action := func(text string) ledger.Action {
		for _, a := range w.actions() {
			if strings.Contains(string(a.Payload), text) {
				return a
			}
		}
		t.Fatalf("no action for %q", text)
		return ledger.Action{}
	}

	first := w.pass()
	require.Equal(t, operator.OutcomeHardStop, first.Outcome, "%+v", first)
	held := byEntry(first)["later"]
	require.Equal(t, operator.NoteHeld, held.Note)
	require.True(t, strings.HasPrefix(held.Reason, "hard stop: login ("), held.Reason)
	a := action("held, then published")
	require.Equal(t, ledger.Planned, a.Status)
	require.NotNil(t, a.LastStop, "the ledger says what held it")
	require.Equal(t, "login", a.LastStop.Kind)
	require.NotEmpty(t, a.LastStop.Cause)
	require.Equal(t, held.Reason, a.LastStop.Reason(), "the cause as the pass reported it")
	require.Equal(t, first.RunID, a.LastStop.RunID)
	require.WithinDuration(t, time.Now(), a.LastStop.At, time.Minute)

	// The next pass reaches an earlier entry first: its stop holds the
	// later entry before it is even looked at, and that is what the later
	// one's record says now.
	w.calendar("entries:\n" + entryAt("earlier", earlier, "held first") + entryAt("later", later, "held, then published"))
	second := w.pass()
	require.Equal(t, operator.OutcomeHardStop, second.Outcome, "%+v", second)
	require.NotEqual(t, first.RunID, second.RunID)
	got := byEntry(second)
	require.Equal(t, operator.NoteHeld, got["earlier"].Note)
	require.Equal(t, operator.StatusNotAttempted, got["later"].Status, "the site was stopped before it: %+v", got["later"])
	e, l := action("held first"), action("held, then published")
	require.NotNil(t, e.LastStop)
	require.Equal(t, got["earlier"].Reason, e.LastStop.Reason())
	require.Equal(t, second.RunID, e.LastStop.RunID)
	require.NotNil(t, l.LastStop)
	require.Equal(t, second.RunID, l.LastStop.RunID, "this pass's stop, not the one before")
	require.Equal(t, e.LastStop.Reason(), l.LastStop.Reason(), "held by the same stop, with its cause")
	require.Empty(t, w.effects(demosite.EffectPost))

	// Signed in again: both go ahead, and no stop is left on them.
	require.NoError(t, w.srv.SetFaults(demosite.Faults{}))
	third := w.pass()
	require.Equal(t, operator.OutcomeOK, third.Outcome, "%+v", third)
	for _, text := range []string{"held first", "held, then published"} {
		a := action(text)
		require.Equal(t, ledger.Verified, a.Status, text)
		require.Nil(t, a.LastStop, "%s: no stop once it went ahead", text)
	}
	require.Len(t, w.effects(demosite.EffectPost), 2)
}
