//go:build unix

package api_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/api"
)

// A FIFO where the token file should be is refused at once: opening it
// used to wait for a writer before the file's kind was checked.
func TestTokenFileFIFORefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.Mkdir(dir, 0o700))
	path := filepath.Join(dir, "tokens")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	done := make(chan error, 1)
	go func() { _, _, err := api.LoadOrCreateTokens(path); done <- err }()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "not a regular file (a FIFO)")
	case <-time.After(10 * time.Second):
		t.Fatal("LoadOrCreateTokens blocked on a FIFO")
	}
}
