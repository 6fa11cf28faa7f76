package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// hostile is text an agent, a page or a site might send: an ESC sequence
// that clears the screen, an OSC that sets the window title, a C1 CSI, a
// bell and a bidi override.
const hostile = "evil\x1b[2J\x1b]0;pwned\x07\u009b31m\u202etxt"

// rawControl reports a control character a terminal would act on.
func rawControl(s string) (rune, bool) {
	for _, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\u202e' {
			return r, true
		}
	}
	return 0, false
}

// Titles, reasons, grants and history from agents are printed with their
// control characters escaped, in tables and in show.
func TestTasksOutputEscapesControlCharacters(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	db, err := ledger.Open(ctx, c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	task, _, err := db.CreateTask(ctx, "agent:"+hostile, ledger.TaskRequest{Title: hostile, Source: "api",
		Contract: ledger.Contract{Domains: []string{"127.0.0.1"}, Capabilities: []string{"post"}}})
	require.NoError(t, err)
	require.NoError(t, db.SetTaskStatus(ctx, task.ID, ledger.TaskCancelled, nil, "cancelled by the agent (api): "+hostile))
	l, err := db.AcquireLease(ctx, "browser-operator", "seed", time.Minute)
	require.NoError(t, err)
	a, _, err := db.Reserve(ctx, l.Fence(), ledger.Intent{TaskID: task.ID, Type: "post", Site: "demo", Actor: "alice",
		Payload: []byte(`{"intent":"task:x","text":"hi"}`)})
	require.NoError(t, err)
	_, err = db.Transition(ctx, l.Fence(), a.ID, ledger.Change{To: ledger.Failed, Class: ledger.Definitive, Reason: "site said: " + hostile})
	require.NoError(t, err)
	require.NoError(t, db.ReleaseLease(ctx, l))
	require.NoError(t, db.Close())

	for _, args := range [][]string{{"tasks"}, {"tasks", "show", task.ID}, {"actions", "list"}, {"actions", "show", a.ID}} {
		code, out, errs := c.run(args...)
		require.Equal(t, 0, code, "%v: %s", args, errs)
		require.Contains(t, out, "evil", "%v prints the text", args)
		if r, ok := rawControl(out); ok {
			t.Fatalf("browserop %s prints a raw %U:\n%q", strings.Join(args, " "), r, out)
		}
		require.Contains(t, out, `\x1b`, "%v shows the escape, escaped", args)
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":         "plain text",
		"a\x1b[2Jb":          `a\x1b[2Jb`,
		"bell\x07":           `bell\x07`,
		"two\nlines\ttab":    `two\nlines\ttab`,
		"csi\u009b31m":       `csi\u009b31m`,
		"rtl\u202eevil":      `rtl\u202eevil`,
		"del\x7f":            `del\x7f`,
		"bad\xffutf8":        `bad\xffutf8`,
		"ünïcödé and 日本語 ok": "ünïcödé and 日本語 ok",
	} {
		require.Equal(t, want, clean(in), "%q", in)
	}
}

// Text logs quote what an agent or a page wrote: no raw control
// character reaches the terminal through a log line either.
func TestTextLogsEscapeControlCharacters(t *testing.T) {
	var buf strings.Builder
	cfg := config.Config{}
	cfg.Log.Format = "text"
	log := logger(cfg, &buf)
	log.Warn("problem", "detail", "task x: intent y: "+hostile)
	log.Warn(hostile)
	if r, ok := rawControl(strings.TrimSuffix(strings.ReplaceAll(buf.String(), "\n", ""), "")); ok {
		t.Fatalf("a text log line holds a raw %U: %q", r, buf.String())
	}
	require.Contains(t, buf.String(), `\x1b`)
}
