//go:build unix

package regularfile

import (
	"os"
	"syscall"
)

// openNonblocking opens path read-only with O_NONBLOCK, so that a FIFO
// opens at once instead of waiting for a writer.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
}

// blocking clears O_NONBLOCK on a regular file (where it changes nothing
// today, but reads should not depend on that).
func blocking(f *os.File) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
