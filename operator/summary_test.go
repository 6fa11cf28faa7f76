package operator_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
)

// TestPassSummaryAndLogLines: a reconciled action is listed once, under its
// entry (not again as already verified); each action line names the entry,
// the action, the outcome and the permalink; a pass is one summary line;
// an entry verified in an earlier pass is not logged again.
func TestPassSummaryAndLogLines(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, demosite.Faults{})
	var logs bytes.Buffer
	w.useRunner(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})), w.site)
	w.calendar("entries:\n" + post("crash", "was I published?"))
	l, err := w.db.AcquireLease(ctx, "browser-operator", "crashed", time.Minute)
	require.NoError(t, err)
	a, _, err := w.db.Reserve(ctx, l.Fence(), calendarIntent("crash", "was I published?"))
	require.NoError(t, err)
	_, err = w.db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Executing, Reason: "then crashed", Budget: w.policy})
	require.NoError(t, err)
	w.publishDirectly("was I published?")
	_, err = w.db.AcquireLease(ctx, "browser-operator", "crashed", time.Millisecond)
	require.NoError(t, err)
	time.Sleep(5 * time.Millisecond)

	sum := w.pass()
	require.Len(t, sum.Actions, 1, "listed once: %+v", sum.Actions)
	require.Equal(t, "crash", sum.Actions[0].Entry, "under its entry")
	require.Equal(t, operator.NoteReconciledVerified, sum.Actions[0].Note)
	require.Zero(t, sum.Counts["already_verified"])

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var actionLines, passLines []string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "msg=action "):
			actionLines = append(actionLines, l)
		case strings.Contains(l, "msg=pass "):
			passLines = append(passLines, l)
		}
		require.NotContains(t, l, "pass ended", "one line per pass")
	}
	require.Len(t, passLines, 1, "%s", logs.String())
	require.Contains(t, passLines[0], "outcome=ok")
	require.Len(t, actionLines, 1, "%s", logs.String())
	for _, want := range []string{"entry=crash", "action=" + a.ID, "outcome=reconciled_verified", "permalink=" + w.base + "/p/"} {
		require.Contains(t, actionLines[0], want)
	}

	// The next pass: the entry is done; it is in the summary, not the log.
	logs.Reset()
	sum = w.pass()
	require.Equal(t, 1, sum.Counts["already_verified"])
	require.NotContains(t, logs.String(), "msg=action ", "an entry verified earlier is not logged again")
	require.Equal(t, 1, strings.Count(logs.String(), "msg=pass "))
}
