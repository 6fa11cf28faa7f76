//go:build !windows

package browser

import (
	"os/exec"
	"syscall"
)

// detach makes cmd's process start in a session of its own, so that neither
// the end of browserop nor its terminal's hangup takes it down.
func detach(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = new(syscall.SysProcAttr)
	}
	cmd.SysProcAttr.Setsid = true
}
