//go:build unix

package privatedir_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browserop/browserop/internal/privatedir"
)

func TestCheck(t *testing.T) {
	base := t.TempDir()
	mine := filepath.Join(base, "mine")
	if err := privatedir.Make(mine); err != nil {
		t.Fatalf("a new directory: %v", err)
	}
	if err := privatedir.Make(mine); err != nil {
		t.Fatalf("made again: %v", err)
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(mine, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{open: "is mode 0755", link: "is a symbolic link", file: "is not a directory"}
	if os.Geteuid() == 0 {
		// Root can make a directory another user owns, as that user
		// would have made it first in a shared temporary folder.
		theirs := filepath.Join(base, "theirs")
		if err := os.Mkdir(theirs, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases[theirs] = "is owned by uid 65534, not by this user (uid 0)"
	} else {
		t.Log("not root: the case of another user's directory is not made here")
	}
	for dir, want := range cases {
		err := privatedir.Check(dir)
		if !errors.Is(err, privatedir.ErrNotPrivate) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want ErrNotPrivate saying %q", dir, err, want)
		}
	}
}
