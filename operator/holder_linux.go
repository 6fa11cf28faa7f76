package operator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// processStart returns pid's start time (in clock ticks since boot, field
// 22 of /proc/PID/stat) and whether the process exists. A zombie does not
// exist: it can no longer act.
func processStart(pid int) (start string, exists bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return "", false
	}
	if err != nil {
		// Anything else (too many open files, no permission) proves
		// nothing: the process may well run.
		return "", true
	}
	// The command name, in parentheses, may itself hold spaces.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return "", true
	}
	fields := strings.Fields(string(stat[i+1:]))
	// fields[0] is the state (field 3); the start time is field 22.
	if len(fields) < 20 {
		return "", true
	}
	if fields[0] == "Z" || fields[0] == "X" {
		return "", false
	}
	return fields[19], true
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
