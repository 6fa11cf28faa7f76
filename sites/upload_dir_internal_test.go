//go:build unix

package sites

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The upload copies' folder in the shared temporary folder is refused
// unless it is this user's alone: another user who made it first (0700,
// theirs) used to make every image post fail, and a root person's copies
// went into that user's folder. A link there is refused too.
func TestUploadDirMustBeThisUsers(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(tmp, "browserop-uploads-"+strconv.Itoa(os.Getuid()))

	got, err := uploadDir()
	if err != nil || got != dir {
		t.Fatalf("a new folder: %q, %v", got, err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}

	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := uploadDir(); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Fatalf("a link: %v", err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}

	if os.Geteuid() != 0 {
		t.Skip("not root: a folder another user owns cannot be made here")
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := uploadDir(); err == nil || !strings.Contains(err.Error(), "is owned by uid 65534, not by this user") {
		t.Fatalf("another user's folder: %v", err)
	}
}
