//go:build unix

package regularfile

import (
	"os"
	"syscall"
)

// openNonblocking opens path read-only with O_NONBLOCK, so that a FIFO
// opens at once instead of waiting for a writer. On a regular file, the
// only kind Open keeps, the flag changes nothing.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
}

// appendFlags open a file for appending never through a link (the last
// element of the path) and without blocking on a FIFO put in its place.
const appendFlags = os.O_WRONLY | os.O_CREATE | os.O_APPEND | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC
