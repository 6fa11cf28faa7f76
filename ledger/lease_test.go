package ledger_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/browserop/browserop/ledger"
	"github.com/stretchr/testify/require"
)

func TestLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)

	a, err := db.AcquireLease(ctx, "op", "A", time.Minute)
	require.NoError(t, err)
	require.Equal(t, int64(1), a.Generation)

	t.Run("ErrLocked", func(t *testing.T) {
		_, err := db.AcquireLease(ctx, "op", "B", time.Minute)
		require.ErrorIs(t, err, ledger.ErrLocked)
		got, err := db.GetLease(ctx, "op")
		require.NoError(t, err)
		require.Equal(t, "A", got.Holder)
		require.Equal(t, a.Generation, got.Generation, "a refused acquisition changes nothing")
	})
	t.Run("Heartbeat", func(t *testing.T) {
		c.Advance(30 * time.Second)
		hb, err := db.Heartbeat(ctx, a, time.Minute)
		require.NoError(t, err)
		require.Equal(t, c.Now().Add(time.Minute), hb.ExpiresAt)
		wrong := a
		wrong.Holder = "B"
		_, err = db.Heartbeat(ctx, wrong, time.Minute)
		require.ErrorIs(t, err, ledger.ErrStaleGeneration, "only the holder heartbeats")
	})
	t.Run("ExpiryTakeover", func(t *testing.T) {
		c.Advance(61 * time.Second)
		b, err := db.AcquireLease(ctx, "op", "B", time.Minute)
		require.NoError(t, err)
		require.Equal(t, a.Generation+1, b.Generation, "every acquisition increments the generation")
		_, err = db.Heartbeat(ctx, a, time.Minute)
		require.ErrorIs(t, err, ledger.ErrStaleGeneration)
		a = b
	})
	t.Run("Release", func(t *testing.T) {
		require.NoError(t, db.ReleaseLease(ctx, a))
		require.NoError(t, db.ReleaseLease(ctx, a), "releasing twice is safe")
		got, err := db.GetLease(ctx, "op")
		require.NoError(t, err)
		require.False(t, got.Held(c.Now()))
		cnew, err := db.AcquireLease(ctx, "op", "C", time.Minute)
		require.NoError(t, err, "a released lease is free at once")
		require.Equal(t, a.Generation+1, cnew.Generation)
	})
	t.Run("BadArguments", func(t *testing.T) {
		_, err := db.AcquireLease(ctx, "", "A", time.Minute)
		require.Error(t, err)
		_, err = db.AcquireLease(ctx, "op2", "A", 0)
		require.Error(t, err)
	})
}

// TestLeaseTwoProcesses races two real processes for the lease on one file.
func TestLeaseTwoProcesses(t *testing.T) {
	t.Parallel()
	path := MustOpenAt(t, t.TempDir()+"/ledger.db", newClock()).Path()
	start := time.Now().Add(300 * time.Millisecond)
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLeaseHelperProcess$")
		cmd.Env = append(os.Environ(), "LEDGER_HELPER_PATH="+path, fmt.Sprintf("LEDGER_HELPER_HOLDER=proc%d", i),
			fmt.Sprintf("LEDGER_HELPER_START=%d", start.UnixNano()))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	held, locked := 0, 0
	for i, cmd := range cmds {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		switch code {
		case 0:
			held++
			require.Contains(t, outs[i].String(), "HELD generation=1")
		case 4:
			locked++
			require.Contains(t, outs[i].String(), "LOCKED")
		default:
			t.Fatalf("helper %d exited %d: %s", i, code, outs[i].String())
		}
	}
	require.Equal(t, 1, held, "exactly one process holds the lease")
	require.Equal(t, 1, locked, "the other reports locked")
}

// TestLeaseHelperProcess is the body of TestLeaseTwoProcesses' processes.
func TestLeaseHelperProcess(t *testing.T) {
	path := os.Getenv("LEDGER_HELPER_PATH")
	if path == "" {
		t.Skip("helper process for TestLeaseTwoProcesses")
	}
	var startNanos int64
	fmt.Sscan(os.Getenv("LEDGER_HELPER_START"), &startNanos)
	db, err := ledger.Open(context.Background(), path, ledger.Options{})
	if err != nil {
		fmt.Println("OPEN", err)
		os.Exit(1)
	}
	time.Sleep(time.Until(time.Unix(0, startNanos)))
	l, err := db.AcquireLease(context.Background(), "browser-operator", os.Getenv("LEDGER_HELPER_HOLDER"), time.Minute)
	switch {
	case err == nil:
		fmt.Printf("HELD generation=%d\n", l.Generation)
		// Hold it while the other process tries.
		time.Sleep(500 * time.Millisecond)
		db.Close()
		os.Exit(0)
	case strings.Contains(err.Error(), ledger.ErrLocked.Error()):
		fmt.Println("LOCKED", err)
		db.Close()
		os.Exit(4)
	default:
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
}

func TestTakeOverLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, c := MustOpen(t)
	dead, err := db.AcquireLease(ctx, "op", "dead", time.Minute)
	require.NoError(t, err)

	t.Run("ErrLocked", func(t *testing.T) {
		// Only from the lease exactly as it was judged: another holder or
		// generation since means someone else acted.
		stale := dead
		stale.Generation++
		_, err := db.TakeOverLease(ctx, stale, "B", time.Minute)
		require.ErrorIs(t, err, ledger.ErrLocked)
		other := dead
		other.Holder = "someone"
		_, err = db.TakeOverLease(ctx, other, "B", time.Minute)
		require.ErrorIs(t, err, ledger.ErrLocked)
		got, err := db.GetLease(ctx, "op")
		require.NoError(t, err)
		require.Equal(t, dead.Generation, got.Generation, "a refused take-over changes nothing")
		require.Equal(t, "dead", got.Holder)
	})
	t.Run("OK", func(t *testing.T) {
		c.Advance(time.Second) // long before the dead holder's lease expires
		l, err := db.TakeOverLease(ctx, dead, "B", time.Minute)
		require.NoError(t, err)
		require.Equal(t, dead.Generation+1, l.Generation, "a new generation")
		require.Equal(t, c.Now().Add(time.Minute), l.ExpiresAt)
		// The old holder, should it only have been frozen, is fenced out.
		_, err = db.Heartbeat(ctx, dead, time.Minute)
		require.ErrorIs(t, err, ledger.ErrStaleGeneration)
		_, err = db.StartRun(ctx, dead)
		require.ErrorIs(t, err, ledger.ErrStaleGeneration)
	})
}
