package operator

import (
	"os"
	"strings"
	"syscall"
)

// CrashEnv names the environment variable that arms crash points: a comma
// separated list of point names. The process then kills itself (SIGKILL, no
// cleanup, like a power cut) the first time it reaches one of them. It is
// for the crash-recovery tests and the torture harness; unset, a crash
// point costs one map lookup on a nil map.
const CrashEnv = "BROWSEROP_CRASH_AT"

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
}

var armed = parseCrashEnv(os.Getenv(CrashEnv))

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

// crashPoint kills the process when the named point is armed.
func crashPoint(name string) {
	if armed[name] {
		os.Stderr.WriteString("browserop: crash point " + name + "\n")
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never returns
	}
}
