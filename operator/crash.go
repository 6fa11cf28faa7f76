package operator

import (
	"os"
	"strings"
	"sync"
)

// CrashEnv names the environment variable that arms crash points: a comma
// separated list of point names. The process then kills itself (SIGKILL, no
// cleanup, like a power cut) the first time it reaches one of them. It is
// for the crash-recovery tests and the torture harness; unset, a crash
// point costs one map lookup on a nil map.
const CrashEnv = "BROWSEROP_CRASH_AT"

// PauseEnv names the environment variable that arms pause points at the
// crash points: a comma separated list of point names. The process then
// stops itself (SIGSTOP: every goroutine frozen, the lease heartbeat too,
// as when a person suspends it) the first time it reaches one of them, and
// goes on from that point when sent SIGCONT. A point armed in both pauses
// first and crashes when resumed. A pause never lands inside a lease
// heartbeat's ledger write: frozen there, the process would hold SQLite's
// write lock and no other operator could take over until it ran again,
// which is a stall, not the takeover a pause is for. It is for the tests of
// an operator that loses its lease mid-action; unset, a pause point costs a
// nil check.
const PauseEnv = "BROWSEROP_PAUSE_AT"

// CrashPoints lists every crash point along the action and tab paths.
var CrashPoints = []string{
	"after-reserve",
	"after-executing",
	"after-click-sent",
	"after-click-returned",
	"after-verification",
	"after-verified",
	"before-budget-commit",
	"tab-created",
	"tab-close",
	// Reached only by an action with media: uploaded, not yet clicked.
	"after-upload",
}

var armed = parseCrashEnv(os.Getenv(CrashEnv))

var (
	// paused holds the armed pause points; a point is removed once paused
	// at. It is nil when PauseEnv is unset.
	paused = parseCrashEnv(os.Getenv(PauseEnv))
	// pauseGate is held by a pause from before it stops the process until
	// it resumes, and by the lease heartbeat around its ledger write, when
	// a pause point is armed (see PauseEnv).
	pauseGate sync.Mutex
)

func parseCrashEnv(v string) map[string]bool {
	if v == "" {
		return nil
	}
	m := map[string]bool{}
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			m[p] = true
		}
	}
	return m
}

// crashPoint stops the process the first time it reaches the named point
// when the point is armed in PauseEnv, and kills it when the point is
// armed in CrashEnv.
func crashPoint(name string) {
	pausePoint(name)
	if armed[name] {
		os.Stderr.WriteString("browserop: crash point " + name + "\n")
		killSelf()
		select {} // never returns
	}
}

// pausePoint stops the process (SIGSTOP) the first time it reaches the
// named point when the point is armed in PauseEnv, and returns once the
// process is sent SIGCONT. The caller waits for SIGCONT rather than
// trusting its own kill to stop it at once: the kernel may hand a signal
// sent to the process to another thread, and this one then runs on for a
// moment (past the point) before the stop reaches it.
// pauseArmed reports whether name is armed as a pause point (and not yet
// paused at).
func pauseArmed(name string) bool {
	if paused == nil {
		return false
	}
	pauseGate.Lock()
	defer pauseGate.Unlock()
	return paused[name]
}

func pausePoint(name string) {
	if paused == nil {
		return
	}
	pauseGate.Lock()
	defer pauseGate.Unlock()
	if !paused[name] {
		return
	}
	delete(paused, name)
	stopSelf(name)
	os.Stderr.WriteString("browserop: resumed at pause point " + name + "\n")
}

// heldOffPause keeps a pause from stopping the process until done is
// called; the lease heartbeat wraps its ledger write in it (see PauseEnv).
// Without an armed pause point it does nothing.
func heldOffPause() (done func()) {
	if paused == nil {
		return func() {}
	}
	pauseGate.Lock()
	return pauseGate.Unlock
}
