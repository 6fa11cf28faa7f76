//go:build linux

package procstat_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/browserop/browserop/internal/procstat"
	"github.com/stretchr/testify/require"
)

func TestRead(t *testing.T) {
	state, start, exists := procstat.Read(os.Getpid())
	require.True(t, exists)
	require.False(t, procstat.Gone(state))
	require.NotEmpty(t, start)
	_, again, _ := procstat.Read(os.Getpid())
	require.Equal(t, start, again, "a process's start time does not change")

	// A child that exited and was not waited for is a zombie; waited
	// for, it has no entry.
	child := exec.Command("true")
	require.NoError(t, child.Start())
	pid := child.Process.Pid
	require.Eventually(t, func() bool {
		s, _, ok := procstat.Read(pid)
		return ok && procstat.Gone(s)
	}, 5e9, 1e7, "an exited, unwaited child is a zombie")
	require.NoError(t, child.Wait())
	_, _, exists = procstat.Read(pid)
	require.False(t, exists)
}
