//go:build linux

package operator_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/operator"
)

// These tests guard how a lease's holder is judged (issue 20, "Tests that
// guard the newest rules"): each fails on a one-line bug that a mutation
// run of the package's other tests left alive, and each such bug takes the
// lease from an operator that still runs.

// A holder whose start time could not be read when it named itself ("-")
// cannot be told from another process that took its pid: while its pid
// runs, it is alive, whatever that process's start time. Only a pid that
// is gone proves it dead.
func TestHolderWithoutStartTimeIsAlive(t *testing.T) {
	t.Parallel()
	child := exec.Command("sleep", "60")
	require.NoError(t, child.Start())
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	host := operator.LocalHost()
	require.NotEmpty(t, host)
	start, ok := operator.ProcessStart(child.Process.Pid)
	require.True(t, ok)
	require.NotEmpty(t, start, "the pid runs, with a start time of its own")
	holder := fmt.Sprintf("%s:%d:-:42", host, child.Process.Pid)

	require.False(t, operator.HolderDead(holder), "a holder without a start time whose pid runs is alive")

	require.NoError(t, child.Process.Kill())
	_, _ = child.Process.Wait()
	require.True(t, operator.HolderDead(holder), "its pid is gone")
}

// The host identity names this process's pid namespace: two containers
// that share a host name (and a boot) number their pids apart.
func TestLocalHostNamesThePidNamespace(t *testing.T) {
	t.Parallel()
	ns, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	require.NoError(t, err)
	inode := strings.TrimSuffix(strings.TrimPrefix(ns, "pid:["), "]")
	require.NotEmpty(t, inode)
	host := operator.LocalHost()
	require.NotEmpty(t, host)
	require.True(t, strings.HasSuffix(host, "."+inode), "the host identity %q names the pid namespace %s", host, inode)
}

// An operator in another pid namespace on this host and boot (a container
// sharing the host name: the usual case for a container that runs the
// operator as its pid 1) names itself with a host identity other than
// ours, and is never judged here: our pid 1 is another process, started
// at another time, which would otherwise "prove" it dead. It runs this
// test binary in a new user and pid namespace and compares what it names.
func TestHolderInAnotherPidNamespaceIsNotJudged(t *testing.T) {
	if os.Getenv("BROWSEROP_HOLDER_CHILD") == "1" {
		// The child, pid 1 of its own namespace: say where it runs, and
		// keep running until the parent has read its start time.
		fmt.Println(operator.LocalHost())
		_, _ = io.Copy(io.Discard, os.Stdin)
		return
	}
	t.Parallel()
	child := exec.Command(os.Args[0], "-test.run=^TestHolderInAnotherPidNamespaceIsNotJudged$", "-test.count=1")
	child.Env = append(os.Environ(), "BROWSEROP_HOLDER_CHILD=1",
		"BROWSEROP_TEST_CHROME=/nonexistent/no-browser-for-this-child") // its TestMain starts no browser
	child.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
	stdin, err := child.StdinPipe()
	require.NoError(t, err)
	stdout, err := child.StdoutPipe()
	require.NoError(t, err)
	if err := child.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EACCES) {
			t.Skipf("no new user and pid namespace here (TestLocalHostNamesThePidNamespace still checks the rule): %v", err)
		}
		require.NoError(t, err)
	}
	t.Cleanup(func() { stdin.Close(); child.Process.Kill(); child.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the child names its host identity")
	theirs := strings.TrimSpace(line)
	// What the child would write as its holder: its pid there is 1, its
	// start time the one the kernel keeps (ticks since boot, the same from
	// either namespace).
	start, ok := operator.ProcessStart(child.Process.Pid)
	require.True(t, ok)
	require.NotEmpty(t, start)

	ours := operator.LocalHost()
	hostname, err := os.Hostname()
	require.NoError(t, err)
	require.NotEmpty(t, theirs)
	require.True(t, strings.HasPrefix(theirs, hostname+"/"), "same host name: %q", theirs)
	require.NotEqual(t, ours, theirs, "another pid namespace on this host and boot is another host identity")

	holder := fmt.Sprintf("%s:1:%s:42", theirs, start)
	ourInit, ok := operator.ProcessStart(1)
	require.True(t, ok)
	require.NotEqual(t, start, ourInit, "our pid 1 is another process")
	require.False(t, operator.HolderDead(holder), "an operator in another pid namespace is never judged: it runs")
}
