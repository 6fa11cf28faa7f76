package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/service"
)

// config cleanup: unset until the person sets it (never a default), a
// value outside the three is refused and changes nothing, and the value
// set is what a pass reads (the same profile key).
func TestConfigCleanup(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	code, out, errs := c.run("config", "cleanup")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "cleanup: not set")
	require.Contains(t, out, "browserop config cleanup submitted_only")

	code, _, errs = c.run("config", "cleanup", "always")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "not a cleanup preference")
	code, _, _ = c.run("config", "tabs")
	require.Equal(t, 2, code)

	code, out, errs = c.run("config", "cleanup", "submitted_only")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "cleanup: submitted_only")
	code, out, errs = c.run("config", "cleanup", "--json")
	require.Equal(t, 0, code, errs)
	var set ledger.CleanupSetting
	require.NoError(t, json.Unmarshal([]byte(out), &set), out)
	require.Equal(t, ledger.CleanupSubmittedOnly, set.Preference)
	require.Equal(t, "cli", set.SetBy)

	// The key is the profile the runner gets (wiring: profileKey).
	db, err := ledger.Open(context.Background(), c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	defer db.Close()
	e := &env{environ: c.env, stdout: &discard{}, stderr: &discard{}}
	cfg, err := e.config()
	require.NoError(t, err)
	bc, err := cfg.ForBrowser(c.env)
	require.NoError(t, err)
	got, err := db.CleanupSettingOf(context.Background(), profileKey(bc))
	require.NoError(t, err)
	require.Equal(t, ledger.CleanupSubmittedOnly, got.Preference)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestParseCleanupAnswer(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]ledger.CleanupPreference{"1": ledger.CleanupNever, " 2\n": ledger.CleanupSubmittedOnly,
		"3": ledger.CleanupSubmittedAndProbeBlockers, "never": ledger.CleanupNever} {
		got, err := parseCleanupAnswer(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got)
	}
	_, err := parseCleanupAnswer("\n")
	require.ErrorIs(t, err, errNoAnswer, "no answer is no preference")
	_, err = parseCleanupAnswer("yes")
	require.ErrorIs(t, err, ledger.ErrBadPreference)
}

// runAt runs a command line in-process like RunEnv, with stdin and the
// terminal check given.
func (c *cli) runAt(stdin io.Reader, interactive func() bool, args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, environ: c.env, exec: service.SystemExec, goos: runtime.GOOS, stdin: stdin, interactive: interactive}
	code = runWith(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func (c *cli) cleanupSetting() ledger.CleanupSetting {
	c.t.Helper()
	db, err := ledger.Open(context.Background(), c.ledgerPath(), ledger.Options{})
	require.NoError(c.t, err)
	defer db.Close()
	e := &env{environ: c.env}
	cfg, err := e.config()
	require.NoError(c.t, err)
	bc, err := cfg.ForBrowser(c.env)
	require.NoError(c.t, err)
	set, err := db.CleanupSettingOf(context.Background(), profileKey(bc))
	require.NoError(c.t, err)
	return set
}

// `run` asks for the cleanup preference only on a terminal: piped stdin
// (the real terminal check, on a pipe) is never asked, even with an
// answer waiting in it, and nothing is recorded as asked.
func TestRunNeverAsksWithPipedStdin(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	if os.Geteuid() == 0 {
		c.env = append(c.env, "BROWSEROP_BROWSER_NO_SANDBOX=true")
	}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	_, err = w.WriteString("3\n")
	require.NoError(t, err)
	w.Close()
	stdout, err := os.CreateTemp(t.TempDir(), "stdout")
	require.NoError(t, err)
	defer stdout.Close()
	// The check RunEnv uses, on a pipe and a file.
	interactive := func() bool { return isTerminal(r) && isTerminal(stdout) }
	require.False(t, interactive())
	code, out, errs := c.runAt(r, interactive, "run")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.NotContains(t, out, "may it close")
	set := c.cleanupSetting()
	require.False(t, set.Known(), "piped stdin set %+v", set)
	require.Nil(t, set.AskedAt, "piped stdin was asked")
	// Nothing read the answer: it is still in the pipe.
	rest, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, "3\n", string(rest))
}

// On a terminal (simulated), `run` asks once when no preference is set,
// and the answer is the profile's preference, set by "terminal"; the next
// run does not ask again. An unanswered question is not asked again
// either.
func TestRunAsksOnceOnATerminal(t *testing.T) {
	t.Parallel()
	tty := func() bool { return true }
	c := newCLI(t)
	if os.Geteuid() == 0 {
		c.env = append(c.env, "BROWSEROP_BROWSER_NO_SANDBOX=true")
	}
	code, out, errs := c.runAt(strings.NewReader("3\n"), tty, "run")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Contains(t, out, "may it close by itself?")
	require.Contains(t, out, "cleanup: submitted_and_probe_blockers")
	set := c.cleanupSetting()
	require.Equal(t, ledger.CleanupSubmittedAndProbeBlockers, set.Preference)
	require.Equal(t, "terminal", set.SetBy)
	require.NotNil(t, set.AskedAt)

	code, out, errs = c.runAt(strings.NewReader("1\n"), tty, "run")
	require.Equal(t, 0, code, errs)
	require.NotContains(t, out, "may it close")
	require.Equal(t, ledger.CleanupSubmittedAndProbeBlockers, c.cleanupSetting().Preference, "asked twice")

	// --json is a program's: never asked.
	c2 := newCLI(t)
	if os.Geteuid() == 0 {
		c2.env = append(c2.env, "BROWSEROP_BROWSER_NO_SANDBOX=true")
	}
	code, out, errs = c2.runAt(strings.NewReader("2\n"), tty, "--json", "run")
	require.Equal(t, 0, code, errs)
	require.NotContains(t, out, "may it close")
	require.False(t, c2.cleanupSetting().Known())

	// No answer: nothing set, and not asked again.
	code, out, errs = c2.runAt(strings.NewReader("\n"), tty, "run")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "may it close by itself?")
	require.Contains(t, out, "no cleanup preference set")
	set = c2.cleanupSetting()
	require.False(t, set.Known())
	require.NotNil(t, set.AskedAt)
	code, out, _ = c2.runAt(strings.NewReader("3\n"), tty, "run")
	require.Equal(t, 0, code)
	require.NotContains(t, out, "may it close")
	require.False(t, c2.cleanupSetting().Known())
}
