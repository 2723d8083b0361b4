//go:build linux

package snapshot

import (
	"os"
	"syscall"
)

// statCtimeIno is a file's change time (ns) and inode, 0 when unknown.
func statCtimeIno(fi os.FileInfo) (int64, uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano(), st.Ino
	}
	return 0, 0
}
