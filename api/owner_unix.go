//go:build unix

package api

import (
	"fmt"
	"os"
	"syscall"
)

// checkOwner refuses a file another user owns.
func checkOwner(fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("owned by uid %d, not by this user (uid %d)", st.Uid, uid)
	}
	return nil
}
