//go:build !windows

package browser

import (
	"errors"
	"os"
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

// killStarted kills a Chrome this process started and its helpers: it runs
// in a session of its own (detach), so its process group is its pid.
func killStarted(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill()
}

// launchLock is an exclusive lock on a file, held by one process at a time
// and let go by the kernel when that process dies.
type launchLock struct{ f *os.File }

// tryLock takes the lock on path without waiting; ok is false while
// another process holds it.
func tryLock(path string) (l *launchLock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return &launchLock{f: f}, true, nil
}

// unlock lets the lock go.
func (l *launchLock) unlock() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}
