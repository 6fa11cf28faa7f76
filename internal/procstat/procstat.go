// Package procstat reads a Linux process's state and start time from
// /proc/PID/stat, for the two places that must tell a running process from
// a gone, dead or reused one: the Chrome holding a profile (package
// browser) and the operator holding the lease (package operator).
package procstat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// Read returns pid's state letter (field 3) and start time (field 22, in
// clock ticks since boot). exists is false only when /proc has no entry for
// pid; any other read error proves nothing, and Read answers exists with an
// empty state and start. A field it cannot parse is empty.
func Read(pid int) (state byte, start string, exists bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return 0, "", false
	}
	if err != nil {
		return 0, "", true
	}
	// The command name, in parentheses, may itself hold spaces or
	// parentheses: the fields start after the last ')'.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0, "", true
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) > 0 && len(fields[0]) == 1 {
		state = fields[0][0]
	}
	if len(fields) >= 20 {
		start = fields[19]
	}
	return state, start, true
}

// Gone reports whether a state letter is a zombie's or a dead process's:
// such a process can no longer act.
func Gone(state byte) bool { return state == 'Z' || state == 'X' }
