package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
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
