// Package regularfile opens and reads files that a person or an agent can
// put in browserop's folders (calendar, media, sites, config, tokens)
// without trusting what they are: a FIFO, a device or a socket where a file
// is expected is refused at once, never waited on, and a file is read up to
// a bound, never whole.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is returned (wrapped) for a path that is not a regular
// file, or a link to one: a FIFO, a device, a socket or a directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned (wrapped) by ReadFile for a file over its limit.
var ErrTooLarge = errors.New("too large")

// Open opens path for reading without blocking on it: opening a FIFO
// does not wait for a writer, and a device is not read from. It returns
// the file and what it is, or an error wrapping ErrNotRegular (its kind
// named: "a FIFO", "a device") for anything but a regular file. A link is
// followed; what it reaches must be a regular file.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := openNonblocking(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%w (%s)", ErrNotRegular, Kind(fi.Mode()))
	}
	return f, fi, nil
}

// OpenAppend opens path for appending, creating it with perm, as a log is
// opened: never through a link, without blocking on a FIFO, and refused
// with an error wrapping ErrNotRegular when it is anything but a regular
// file. A file over limit bytes is emptied first.
func OpenAppend(path string, perm os.FileMode, limit int64) (*os.File, error) {
	flags := appendFlags
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w (%s)", ErrNotRegular, Kind(fi.Mode()))
	}
	return f, nil
}

// ReadFile returns the bytes of the regular file at path, refusing (as
// Open does) anything else, and a file over limit bytes with an error
// wrapping ErrTooLarge: only limit+1 bytes are ever read, whatever the
// file says its size is.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, fmt.Errorf("%w: %d bytes, over the limit of %d", ErrTooLarge, fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: over the limit of %d bytes", ErrTooLarge, limit)
	}
	return data, nil
}

// Kind names what a file mode is, for an error a person reads: "a FIFO",
// "a device", "a socket", "a directory", "a regular file" or "not a
// regular file".
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}
