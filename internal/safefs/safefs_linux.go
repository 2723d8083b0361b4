package safefs

import (
	"errors"
	"io/fs"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// openRoot opens the root directory (followed: it is trusted).
func openRoot(dir string) (int, error) {
	return openat(unix.AT_FDCWD, dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// openDirIn opens the directory name in dirfd without following a
// symlink (ELOOP or ENOTDIR for one).
func openDirIn(dirfd int, name string) (int, error) {
	return openat(dirfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// openat2Missing is set once openat2 failed as missing (an old kernel, a
// seccomp filter): the component walk is used from then on.
var openat2Missing atomic.Bool

// openBeneath opens the directory rel beneath dirfd in one openat2 call
// with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS; ok is false when openat2 is
// not available (walk the components instead).
func openBeneath(dirfd int, rel string) (fd int, ok bool, err error) {
	if openat2Missing.Load() {
		return -1, false, nil
	}
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err = unix.Openat2(dirfd, rel, how)
		if !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			break
		}
	}
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.E2BIG) {
		openat2Missing.Store(true)
		return -1, false, nil
	}
	return fd, true, err
}

// chmodIn sets the mode of name in dirfd through a descriptor of the
// entry itself (O_PATH, not following a symlink, which is refused).
func chmodIn(dirfd int, name string, mode fs.FileMode) error {
	fd, err := openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return ErrSymlink
	}
	err = unix.Fchmodat(fd, "", unixMode(mode), unix.AT_EMPTY_PATH)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
		// No fchmodat2: the descriptor's /proc link names the same inode.
		err = unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unixMode(mode), 0)
	}
	return err
}

func mtimeOf(st *unix.Stat_t) int64 { return st.Mtim.Nano() }
