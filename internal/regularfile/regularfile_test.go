//go:build unix

package regularfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browserop/browserop/internal/regularfile"
)

// within fails the test when f does not return in time: a FIFO must be
// refused, never waited on.
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("blocked: a FIFO or device must be refused at once")
		return nil
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "entries.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(ok, []byte("entries: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, path string
		want       error
		kind       string
	}{
		{"FIFO", fifo, regularfile.ErrNotRegular, "a FIFO"},
		{"Device", zero, regularfile.ErrNotRegular, "a device"},
		{"Directory", dir, regularfile.ErrNotRegular, "a directory"},
		{"TooLarge", big, regularfile.ErrTooLarge, "2048 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := within(t, func() error { _, err := regularfile.ReadFile(c.path, 1024); return err })
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.kind) {
				t.Errorf("got %v, want %v naming %q", err, c.want, c.kind)
			}
		})
	}
	t.Run("OK", func(t *testing.T) {
		for _, p := range []string{ok, link} {
			data, err := regularfile.ReadFile(p, 1024)
			if err != nil || string(data) != "entries: []\n" {
				t.Errorf("%s: got %q, %v", p, data, err)
			}
		}
	})
	t.Run("Missing", func(t *testing.T) {
		if _, err := regularfile.ReadFile(filepath.Join(dir, "none"), 1024); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("got %v, want not exist", err)
		}
	})
}
