// Package privatedir checks that a directory browserop keeps private
// files in (the copies it uploads, the API tokens) is the running user's
// alone: a directory, not a link, owned by this user, with no permission
// for anyone else. Another local user who made such a directory first (in
// a shared temporary folder), or a folder others can write, would
// otherwise get the person's files, or make every use of them fail.
package privatedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotPrivate is returned (wrapped) for a directory that is not the
// running user's alone.
var ErrNotPrivate = errors.New("not a private directory")

// Check returns nil when dir is a directory (not a symbolic link) owned by
// the running user whose mode grants nothing to group or others, and
// otherwise an error wrapping ErrNotPrivate that says what is wrong and
// what to do, or the error of reading it.
func Check(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symbolic link: remove it (browserop makes the directory itself)", ErrNotPrivate, dir)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ErrNotPrivate, dir)
	}
	if err := CheckOwner(fi); err != nil {
		return fmt.Errorf("%w: %s is %w: another user made it; remove it or point browserop elsewhere", ErrNotPrivate, dir, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s is mode %04o: others can reach what is in it; run `chmod 700 %s`", ErrNotPrivate, dir, perm, dir)
	}
	return nil
}

// CheckOwner refuses a file or directory another user owns (fi from Stat
// or Lstat): "owned by uid N, not by this user (uid M)".
func CheckOwner(fi fs.FileInfo) error {
	if uid, mine := owner(fi); !mine {
		return fmt.Errorf("owned by uid %d, not by this user (uid %d)", uid, os.Geteuid())
	}
	return nil
}

// Make creates dir (mode 0700, its parents as os.MkdirAll makes them)
// unless it exists, then checks it (Check).
func Make(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return Check(dir)
}
