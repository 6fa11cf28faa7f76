package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

// TestGlobalFlagsBeforeCommand: the common flags work before the command
// too (`browserop --config FILE run` answered `unknown command "--config"`).
func TestGlobalFlagsBeforeCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	missing := filepath.Join(c.dir, "nope.yaml")
	code, _, errs := c.run("--config", missing, "status")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, missing, "the config named before the command is the one read")
	require.NotContains(t, errs, "unknown command")

	code, _, errs = c.run("--config="+missing, "lease")
	require.Equal(t, 2, code, errs)
	require.Contains(t, errs, missing)

	c.seed(ledger.Verified)
	other := filepath.Join(c.dir, "other.db")
	code, out, errs := c.run("--json", "--ledger", c.ledgerPath(), "status")
	require.Equal(t, 0, code, errs)
	var st struct {
		Ledger string         `json:"ledger"`
		Counts map[string]int `json:"counts"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	require.Equal(t, 1, st.Counts["verified"])

	// After the command the flag still wins, as before.
	code, _, errs = c.run("--ledger", other, "status", "--ledger", c.ledgerPath())
	require.Equal(t, 0, code, errs)

	code, _, errs = c.run("--bogus", "status")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "bogus")
	code, _, errs = c.run("--config")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "config")
}
