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

// TestOpenAppend: a log is created with its mode and appended to; one over
// the limit starts empty; a FIFO or a link in its place is refused at once
// and left as it was.
func TestOpenAppend(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "a.log")
	for _, line := range []string{"one\n", "two\n"} {
		f, err := regularfile.OpenAppend(log, 0o600, 1<<10)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if raw, _ := os.ReadFile(log); string(raw) != "one\ntwo\n" {
		t.Fatalf("appended: %q", raw)
	}
	if fi, _ := os.Stat(log); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	f, err := regularfile.OpenAppend(log, 0o600, 4)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("three\n")
	f.Close()
	if raw, _ := os.ReadFile(log); string(raw) != "three\n" {
		t.Fatalf("over the limit, emptied first: %q", raw)
	}

	fifo := filepath.Join(dir, "fifo.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := within(t, func() error { _, err := regularfile.OpenAppend(fifo, 0o600, 1<<10); return err }); err == nil {
		t.Fatal("a FIFO was opened")
	}
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(log, link); err != nil {
		t.Fatal(err)
	}
	if _, err := regularfile.OpenAppend(link, 0o600, 1<<10); err == nil {
		t.Fatal("a link was followed")
	}
	if raw, _ := os.ReadFile(log); string(raw) != "three\n" {
		t.Fatalf("the link's target was written: %q", raw)
	}
}
