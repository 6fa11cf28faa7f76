package browser

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// detachedProcess is DETACHED_PROCESS: no console of the parent's.
const detachedProcess = 0x00000008

// errorSharingViolation is ERROR_SHARING_VIOLATION: another process has the
// file open without sharing.
const errorSharingViolation syscall.Errno = 32

// detach makes cmd's process start without the parent's console and in a
// process group of its own, so that the end of browserop does not take it
// down.
func detach(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = new(syscall.SysProcAttr)
	}
	cmd.SysProcAttr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess
}

// killStarted kills a Chrome this process started.
func killStarted(p *os.Process) { _ = p.Kill() }

// launchLock is an exclusive lock on a file. On Windows the file is opened
// without sharing, which holds it until this process closes it or dies.
type launchLock struct{ f *os.File }

// tryLock takes the lock on path without waiting; ok is false while
// another process holds it.
func tryLock(path string) (l *launchLock, ok bool, err error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, false, err
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil, syscall.OPEN_ALWAYS, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		if errors.Is(err, errorSharingViolation) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return &launchLock{f: os.NewFile(uintptr(h), path)}, true, nil
}

// unlock lets the lock go.
func (l *launchLock) unlock() { _ = l.f.Close() }
