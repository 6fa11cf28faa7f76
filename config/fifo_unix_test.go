//go:build unix

package config

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/internal/regularfile"
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
		go func() { _, err := Load(path, true, nil); done <- err }()
		select {
		case err := <-done:
			require.ErrorContains(t, err, want)
		case <-time.After(10 * time.Second):
			t.Fatalf("Load(%s) blocked", path)
		}
	}
}

// A FIFO where the config file is expected is a configuration error (exit
// 2) that names it, as a command prints it.
func TestConfigFIFOIsConfigError(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, explicit := range []bool{true, false} {
		_, err := Load(fifo, explicit, nil)
		require.EqualError(t, err, "configuration error: config: "+fifo+": not a regular file (a FIFO)")
		require.ErrorIs(t, err, errcode.ErrConfig)
		require.ErrorIs(t, err, regularfile.ErrNotRegular)
		require.Equal(t, errcode.ExitUsage, errcode.Of(err).Exit)
	}
}
