package treewalk

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// dirHandle is an open directory shared by the tasks that open its
// entries relative to it (openat with O_NOFOLLOW, so no symlink is ever
// followed below the start directory). The last release closes it.
type dirHandle struct {
	fd   int
	refs atomic.Int32
}

func newDirHandle(fd int) *dirHandle {
	h := &dirHandle{fd: fd}
	h.refs.Store(1)
	return h
}

func (h *dirHandle) acquire() { h.refs.Add(1) }

func (h *dirHandle) release() {
	if h.refs.Add(-1) == 0 {
		_ = unix.Close(h.fd)
	}
}

// openStart opens the start directory: the work-tree root (absolute), then
// each component of the work-tree-relative slash path start ("." for the
// root) without following symlinks (start was resolved when checked).
func openStart(root, start string) (int, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	if start == "." {
		return fd, nil
	}
	for _, c := range strings.Split(start, "/") {
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		_ = unix.Close(fd)
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: start, Err: err}
		}
		fd = next
	}
	return fd, nil
}

// OpenIn opens name in the directory dirfd for reading, refusing a symlink
// (ELOOP) and, with dir set, anything but a directory; a regular file is
// opened non-blocking, so a FIFO put in its place cannot hang the caller.
// Close the descriptor with CloseFd.
func OpenIn(dirfd int, name string, dir bool) (int, error) {
	flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	if dir {
		flags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_DIRECTORY
	}
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// dirent is one directory entry: its name and type bits (0 for a regular
// file, fs.ModeDir, fs.ModeSymlink, or another irregular type).
type dirent struct {
	name string
	typ  fs.FileMode
}

func lstatType(dirfd int, name string) fs.FileMode {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fs.ModeIrregular
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// readSmall reads a whole regular file of at most limit bytes open as fd.
func readSmall(fd int, limit int) ([]byte, error) {
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
		if len(out) > limit {
			return nil, fmt.Errorf("larger than %d bytes", limit)
		}
	}
}

// CloseFd closes a descriptor from OpenIn.
func CloseFd(fd int) { _ = unix.Close(fd) }
