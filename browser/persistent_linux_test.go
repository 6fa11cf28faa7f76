package browser_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

// sessionOf returns the session id of pid from /proc/<pid>/stat.
func sessionOf(t *testing.T, pid int) string {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	require.GreaterOrEqual(t, len(fields), 4)
	return fields[3] // state ppid pgrp session
}

// TestPersistentDetached: a Persistent Chrome runs in a session of its own,
// so that neither the end of browserop nor its terminal takes it down; a
// plain launch does not.
func TestPersistentDetached(t *testing.T) {
	dir := persistentProfile(t)
	b := launchPersistent(t, dir)
	require.NotEqual(t, sessionOf(t, os.Getpid()), sessionOf(t, browser.PIDOf(b)))
}

// TestPersistentCloseKillsUnresponsive: a Dedicated Chrome that does not
// answer Browser.close is killed after the grace period, and the launch
// record goes with it.
func TestPersistentCloseKillsUnresponsive(t *testing.T) {
	dir := persistentProfile(t)
	b := launchPersistent(t, dir)
	pid := browser.PIDOf(b)
	browser.SetStopGrace(b, time.Second)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	require.NoError(t, b.Close())
	require.False(t, browser.ChromeAlive(pid, dir))
	requireNoRecord(t, dir)
}
