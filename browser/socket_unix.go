//go:build !windows

package browser

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// maxSocketPath is the longest socket path every unix takes as it is
// (macOS: 104 bytes with the NUL; Linux: 108).
const maxSocketPath = 100

// shortSocketPath gives a name for path that fits a socket address, and a
// func to call once it is bound or dialed. A longer path is reached on
// Linux through a descriptor of its directory (/proc/self/fd/N/name).
func shortSocketPath(path string) (string, func(), error) {
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	if runtime.GOOS != "linux" {
		return "", nil, fmt.Errorf("%w: the DevTools socket path %s is longer than %d bytes: choose a shorter browser.profile_dir", ErrConfig, path, maxSocketPath)
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, err
	}
	short := fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path))
	if len(short) > maxSocketPath {
		_ = dir.Close()
		return "", nil, fmt.Errorf("%w: the DevTools socket name %s is too long", ErrConfig, filepath.Base(path))
	}
	return short, func() { _ = dir.Close() }, nil
}

// listenPrivate listens on the unix socket path, a file only this uid may
// reach (mode 0600, in the 0700 profile directory). A socket left by a
// relay that is gone is replaced; one that answers is not, and anything
// that is not a socket is refused.
func listenPrivate(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSocket == 0 {
			return nil, fmt.Errorf("%s is there and is not a socket", path)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := dialPrivate(ctx, path)
		cancel()
		if err == nil {
			_ = conn.Close()
			return nil, fmt.Errorf("another relay answers on %s", path)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	name, done, err := shortSocketPath(path)
	if err != nil {
		return nil, err
	}
	defer done()
	ln, err := net.Listen("unix", name)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %v", path, err)
	}
	// The listener removes the file it bound when it closes: through the
	// short name, which is gone by then. The relay removes it itself.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return ln, nil
}

// dialPrivate connects to the unix socket path.
func dialPrivate(ctx context.Context, path string) (net.Conn, error) {
	name, done, err := shortSocketPath(path)
	if err != nil {
		return nil, err
	}
	defer done()
	var d net.Dialer
	return d.DialContext(ctx, "unix", name)
}
