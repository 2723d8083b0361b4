//go:build !linux

package safefs

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

func openRoot(dir string) (int, error) {
	return openat(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

func openDirIn(dirfd int, name string) (int, error) {
	return openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// openBeneath has no one-call form here: walk the components.
func openBeneath(int, string) (int, bool, error) { return -1, false, nil }

// chmodIn refuses a symlink and sets the mode of name in dirfd without
// following one.
func chmodIn(dirfd int, name string, mode fs.FileMode) error {
	var st unix.Stat_t
	if err := fstatat(dirfd, name, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return ErrSymlink
	}
	return unix.Fchmodat(dirfd, name, unixMode(mode), unix.AT_SYMLINK_NOFOLLOW)
}

func mtimeOf(st *unix.Stat_t) int64 { return st.Mtim.Nano() }
