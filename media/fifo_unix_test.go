//go:build unix

package media_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/media"
)

// A FIFO in the media folder is refused at once: opening it used to wait
// for a writer forever, holding the request (or the pass) that named it.
func TestLoadRefusesAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.png")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	done := make(chan error, 1)
	go func() {
		_, err := media.Load(dir, "pipe.png", "")
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorContains(t, err, `media "pipe.png": not a regular file (a FIFO)`)
	case <-time.After(10 * time.Second):
		t.Fatal("media.Load blocked on a FIFO")
	}
	it := media.Item{File: fifo, SHA256: strings.Repeat("0", 64)}
	go func() {
		_, err := it.Bytes()
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "not a regular file (a FIFO)")
	case <-time.After(10 * time.Second):
		t.Fatal("Item.Bytes blocked on a FIFO")
	}
}
