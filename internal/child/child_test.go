//go:build unix

package child_test

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/internal/child"
)

func TestStart(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		p, err := child.Start(exec.Command("sh", "-c", "echo out; echo err >&2; exit 3"), "sh")
		require.NoError(t, err)
		require.True(t, p.Wait(30*time.Second))
		require.False(t, p.Alive())
		code, sig := p.Exit()
		require.Equal(t, 3, code)
		require.Zero(t, sig)
		require.Equal(t, "out\n", p.Stdout.String())
		require.Equal(t, "err\n", p.Stderr.String())
		require.False(t, p.Ended.Before(p.Started))
	})
	t.Run("Killed", func(t *testing.T) {
		t.Parallel()
		p, err := child.Start(exec.Command("sleep", "60"), "sleep")
		require.NoError(t, err)
		require.True(t, p.Alive())
		require.NoError(t, p.Cmd.Process.Kill())
		<-p.Done()
		code, sig := p.Exit()
		require.Equal(t, -1, code)
		require.Equal(t, syscall.SIGKILL, sig)
	})
}

func TestEnv(t *testing.T) {
	t.Setenv("BROWSEROP_LEDGER_PATH", "/x")
	t.Setenv("XDG_STATE_HOME", "/y")
	env := child.Env(map[string]string{"HOME": "/h"})
	require.Contains(t, env, "HOME=/h")
	homes := 0
	for _, kv := range env {
		if strings.HasPrefix(kv, "HOME=") {
			homes++
		}
	}
	require.Equal(t, 1, homes, "the HOME given replaces this process's")
	for _, kv := range env {
		require.NotContains(t, kv, "BROWSEROP_LEDGER_PATH")
		require.NotContains(t, kv, "XDG_STATE_HOME")
	}
}
