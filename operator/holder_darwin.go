package operator

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// processStart returns pid's start time (from the kernel's process table)
// and whether the process exists. A zombie does not exist: it can no
// longer act.
func processStart(pid int) (start string, exists bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return "", !errors.Is(err, unix.ESRCH)
	}
	if kp.Proc.P_pid != int32(pid) {
		return "", false // no such process: the kernel answers with an empty entry
	}
	if kp.Proc.P_stat == 5 { // SZOMB
		return "", false
	}
	return fmt.Sprintf("%d.%06d", kp.Proc.P_starttime.Sec, kp.Proc.P_starttime.Usec), true
}

// pidSpace is empty: a Mac's pids are one space per host name.
func pidSpace() (space string, ok bool) { return "", true }
