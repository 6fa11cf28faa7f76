package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestE2ELoginStopShownByActionsShow: a pass on a profile nobody signed in
// to holds the entry with a login stop; `actions show` (text and JSON)
// then says what held it, with the cause `run` printed, the pass and the
// time. Signed in, the next pass performs it, and the stop is gone.
func TestE2ELoginStopShownByActionsShow(t *testing.T) {
	w := newWorld(t, opts{browser: true, noSignIn: true})
	w.writeCalendar(entry{ID: "held", Type: "post", Text: "waits for a sign-in", At: time.Now().Add(-time.Second)})

	code, sum, errs := w.pass()
	require.Equal(t, 3, code, "a hard stop: %+v\n%s", sum, errs)
	var id, reason string
	for _, a := range sum.Actions {
		if a.Entry == "held" && a.Note == "held" {
			id, reason = a.ActionID, a.Reason
		}
	}
	require.NotEmpty(t, id, "%+v", sum)
	require.True(t, strings.HasPrefix(reason, "hard stop: login ("), reason)

	code, out, errs := w.run(nil, "actions", "show", id)
	require.Equal(t, 0, code, errs)
	require.Regexp(t, `(?m)^status: +planned$`, out)
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "last stop:") {
			line = l
		}
	}
	require.NotEmpty(t, line, "actions show says what held it:\n%s", out)
	require.Contains(t, line, reason, "with the cause run printed")
	require.Contains(t, line, "; in run "+sum.RunID+" at ")

	code, out, errs = w.run(nil, "actions", "show", id, "--json")
	require.Equal(t, 0, code, errs)
	var shown struct {
		Status   string `json:"status"`
		LastStop *struct {
			Kind   string    `json:"kind"`
			Cause  string    `json:"cause"`
			Reason string    `json:"reason"`
			RunID  string    `json:"run_id"`
			At     time.Time `json:"at"`
		} `json:"last_stop"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &shown), out)
	require.NotNil(t, shown.LastStop, out)
	require.Equal(t, "login", shown.LastStop.Kind)
	require.NotEmpty(t, shown.LastStop.Cause)
	require.Equal(t, reason, shown.LastStop.Reason)
	require.Equal(t, sum.RunID, shown.LastStop.RunID)
	require.WithinDuration(t, time.Now(), shown.LastStop.At, 2*time.Minute)

	code, out, errs = w.run(nil, "actions", "list")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, reason, "the list says why a planned action waits")

	// Signed in: the next pass performs it, and no stop is left on it.
	eventually(t, 20*time.Second, "the Chrome of the pass is stopped at its end", w.browserGone)
	w.signIn()
	code, sum, errs = w.pass()
	require.Equal(t, 0, code, "%+v\n%s", sum, errs)
	a := w.show(id)
	require.Equal(t, "verified", a.Status)
	require.Len(t, w.postsWithText("waits for a sign-in"), 1)
	code, out, errs = w.run(nil, "actions", "show", id)
	require.Equal(t, 0, code, errs)
	require.NotContains(t, out, "last stop:")
	code, out, errs = w.run(nil, "actions", "show", id, "--json")
	require.Equal(t, 0, code, errs)
	require.NotContains(t, out, "last_stop")
}
