package operator

import (
	"fmt"
	"os"
	"strings"
)

// processStart returns pid's start time (in clock ticks since boot, field
// 22 of /proc/PID/stat) and whether the process exists. A zombie does not
// exist: it can no longer act.
func processStart(pid int) (start string, exists bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
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
