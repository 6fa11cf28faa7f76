//go:build unix

package sites_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/sites"
)

// A FIFO or a link to a device among the site files is refused at once,
// naming the file; Load and LoadDir used to wait on the FIFO forever and
// read /dev/zero without end.
func TestLoadRefusesFIFOAndDevice(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(demoPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "demo.yaml"), raw, 0o600))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o600))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")))

	done := make(chan error, 3)
	go func() { _, err := sites.LoadDir(dir); done <- err }()
	go func() { _, err := sites.Load(filepath.Join(dir, "pipe.yaml")); done <- err }()
	go func() { _, err := sites.Load(filepath.Join(dir, "zero.yaml")); done <- err }()
	var msgs []string
	for range 3 {
		select {
		case err := <-done:
			require.Error(t, err)
			msgs = append(msgs, err.Error())
		case <-time.After(20 * time.Second):
			t.Fatal("loading site files blocked on a FIFO or a device")
		}
	}
	all := msgs[0] + "\n" + msgs[1] + "\n" + msgs[2]
	require.Contains(t, all, "pipe.yaml: not a regular file (a FIFO)")
	require.Contains(t, all, "zero.yaml: not a regular file (a device)")
}
