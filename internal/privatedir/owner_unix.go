//go:build unix

package privatedir

import (
	"io/fs"
	"os"
	"syscall"
)

// owner is the owner of fi, and whether it is the running (effective)
// user.
func owner(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, true
	}
	return st.Uid, int(st.Uid) == os.Geteuid()
}
