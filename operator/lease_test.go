package operator_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
)

// holderOf names the process p as a holder, as newHolder would have in it.
func holderOf(t *testing.T, pid int) string {
	t.Helper()
	host := operator.LocalHost()
	require.NotEmpty(t, host)
	start, ok := operator.ProcessStart(pid)
	require.True(t, ok)
	require.NotEmpty(t, start)
	return fmt.Sprintf("%s:%d:%s:42", host, pid, start)
}

func TestHolderDead(t *testing.T) {
	t.Parallel()
	child := exec.Command("sleep", "60")
	require.NoError(t, child.Start())
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	host := operator.LocalHost()
	holder := holderOf(t, child.Process.Pid)
	hostname, _ := os.Hostname()

	require.False(t, operator.HolderDead(holder), "a running holder is alive")
	require.True(t, operator.HolderDead(fmt.Sprintf("%s:%d:1:42", host, child.Process.Pid)),
		"the pid now belongs to a process started at another time: reused")
	require.False(t, operator.HolderDead(fmt.Sprintf("elsewhere.example:%d:1:42", child.Process.Pid)),
		"a holder on another host is never judged")
	require.False(t, operator.HolderDead(fmt.Sprintf("%s/0123456789ab.4026531836:%d:1:42", hostname, child.Process.Pid)),
		"a holder with this host name in another boot or pid namespace is never judged")
	require.False(t, operator.HolderDead(fmt.Sprintf("%s:%d:1:42", hostname, child.Process.Pid)),
		"a holder that names the host without its pid space (an older form) is never judged")
	require.False(t, operator.HolderDead("not a holder"))
	require.False(t, operator.HolderDead(holderOf(t, os.Getpid())), "this process")

	require.NoError(t, child.Process.Kill())
	_, _ = child.Process.Wait()
	require.True(t, operator.HolderDead(holder), "its pid is gone")
}

// TestPassTakesOverLeaseOfDeadOperator: after an operator was killed
// mid-pass, the next pass takes the lease at once (a new generation)
// instead of exiting locked for up to lease_ttl, and marks the killed run
// ended with its last known state. A living holder still locks it out,
// and the summary names it and the expiry.
func TestPassTakesOverLeaseOfDeadOperator(t *testing.T) {
	w := newWorld(t, demosite.Faults{})
	ctx := context.Background()
	w.cfg.LeaseTTL = 10 * time.Minute

	// A living operator (another process) holds the lease: locked.
	alive := exec.Command("sleep", "60")
	require.NoError(t, alive.Start())
	t.Cleanup(func() { alive.Process.Kill(); alive.Wait() })
	l, err := w.db.AcquireLease(ctx, "browser-operator", holderOf(t, alive.Process.Pid), 10*time.Minute)
	require.NoError(t, err)
	killed, err := w.db.StartRun(ctx, l)
	require.NoError(t, err)
	sum := w.pass()
	require.Equal(t, operator.OutcomeLockedSkip, sum.Outcome)
	require.Equal(t, l.Holder, sum.LockedBy)
	require.NotNil(t, sum.LockedUntil)
	require.WithinDuration(t, l.ExpiresAt, *sum.LockedUntil, time.Millisecond)

	// It dies (SIGKILL, mid-pass): the next pass goes on at once.
	require.NoError(t, alive.Process.Kill())
	_, _ = alive.Process.Wait()
	w.calendar("entries:\n" + post("after-crash", "published right after a crash"))
	sum = w.pass()
	require.Equal(t, operator.OutcomeOK, sum.Outcome, "%+v", sum)
	require.Equal(t, l.Generation+1, sum.Generation)
	require.Equal(t, 1, sum.Counts["verified"])
	require.Len(t, w.effects(demosite.EffectPost), 1)
	run, err := w.db.GetRun(ctx, killed.ID)
	require.NoError(t, err)
	require.Equal(t, ledger.OutcomeInterrupted, run.Outcome, "the killed run is marked ended")
	require.False(t, run.EndedAt.IsZero())
	w.checkBooks()
}
