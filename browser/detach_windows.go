package browser

import (
	"os/exec"
	"syscall"
)

// detachedProcess is DETACHED_PROCESS: no console of the parent's.
const detachedProcess = 0x00000008

// detach makes cmd's process start without the parent's console and in a
// process group of its own, so that the end of browserop does not take it
// down.
func detach(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = new(syscall.SysProcAttr)
	}
	cmd.SysProcAttr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess
}
