//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A config path that is a FIFO or a link to a device is refused at once,
// naming it: it used to wait for a writer, or read /dev/zero up to the
// limit before it said the file was too large.
func TestConfigFIFOAndDeviceRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "config.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	zero := filepath.Join(dir, "zero.yaml")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	for path, want := range map[string]string{fifo: "config.yaml: not a regular file (a FIFO)", zero: "zero.yaml: not a regular file (a device)"} {
		done := make(chan error, 1)
		go func() { _, err := LoadConfig(path, true, nil); done <- err }()
		select {
		case err := <-done:
			require.ErrorContains(t, err, want)
		case <-time.After(10 * time.Second):
			t.Fatalf("LoadConfig(%s) blocked", path)
		}
	}
}
