//go:build !linux

package rig

import (
	"os/exec"
	"syscall"
)

// ownGroup does nothing off Linux: the site runs on Debian's packages.
func ownGroup(cmd *exec.Cmd) {}

// signalGroup signals the process alone off Linux.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(sig)
}
