package rig

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own (PHP's server forks
// workers into it) that dies with the test binary, even when that is killed.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the process group of a process started with
// ownGroup, then to the process itself.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	_ = cmd.Process.Signal(sig)
}
