package operator

import (
	"os"
	"strings"

	"github.com/browserop/browserop/internal/procstat"
)

// processStart returns pid's start time (in clock ticks since boot, field
// 22 of /proc/PID/stat) and whether the process exists. A zombie does not
// exist: it can no longer act.
func processStart(pid int) (start string, exists bool) {
	state, start, exists := procstat.Read(pid)
	if !exists || procstat.Gone(state) {
		return "", false
	}
	return start, true
}

// pidSpace names the space pids are numbers in: this boot (a pid means
// another process after a reboot) and this pid namespace (two containers
// with one hostname have two). ok is false when either cannot be read.
func pidSpace() (space string, ok bool) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", false
	}
	ns, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	if err != nil {
		return "", false
	}
	id := strings.ReplaceAll(strings.TrimSpace(string(boot)), "-", "")
	inode := strings.TrimSuffix(strings.TrimPrefix(ns, "pid:["), "]")
	if len(id) < 12 || inode == "" {
		return "", false
	}
	return id[:12] + "." + inode, true
}
