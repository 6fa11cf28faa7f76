package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

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
	require.Equal(t, c.ledgerPath(), st.Ledger, "the flag before the command chose the ledger")

	// After the command the flag still wins, as before.
	code, out, errs = c.run("--json", "--ledger", other, "status", "--ledger", c.ledgerPath())
	require.Equal(t, 0, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	require.Equal(t, c.ledgerPath(), st.Ledger, "the flag after the command wins")

	code, _, errs = c.run("--bogus", "status")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "bogus")
	code, _, errs = c.run("--config")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "config")
}

// TestRunLockedNamesHolderAndExpiry: the locked message says who holds
// the lease and until when.
func TestRunLockedNamesHolderAndExpiry(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	if os.Geteuid() == 0 {
		c.env = append(c.env, "BROWSEROP_BROWSER_NO_SANDBOX=true")
	}
	db, err := ledger.Open(context.Background(), c.ledgerPath(), ledger.Options{})
	require.NoError(t, err)
	host, _ := os.Hostname()
	holder := fmt.Sprintf("%s:%d:1:7", host, os.Getpid()) // alive: this very process
	l, err := db.AcquireLease(context.Background(), "browser-operator", holder, 10*time.Minute)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	code, out, errs := c.run("run")
	require.Equal(t, 4, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	require.Contains(t, out, "another operator holds the lease: "+holder+", until "+fmtTime(l.ExpiresAt))
}
