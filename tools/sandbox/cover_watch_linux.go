package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// coverWatchMask is what a watched directory reports: entries created or
// moved in (a protected file, or a directory that may hold one, appears
// no other way). Writes into existing files are not watched: a file is
// protected by its name, not its content.
const coverWatchMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// coverWatch finds the protected files of a work tree as they appear
// during the run: every directory of the tree (.git directories
// excepted, ignored ones included: a build output directory is where a
// copied .env lands) is watched with inotify for entries created or moved
// in; take drains the queue, checks each new file with the predicate and
// walks each new directory (watching it too). When the queue overflowed
// or a watch could not be added, take walks the whole tree instead, and
// says so.
type coverWatch struct {
	fd        int
	root      string
	protected func(path string) bool
	dirs      map[int32]string // watch descriptor → absolute directory
	broken    string           // why the next take walks the whole tree
}

// newCoverWatch watches root and returns the protected files it holds
// now (absolute paths, in walk order).
func newCoverWatch(root string, protected func(string) bool) (*coverWatch, []string, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, nil, fmt.Errorf("inotify for protected files: %w", err)
	}
	w := &coverWatch{fd: fd, root: filepath.Clean(root), protected: protected, dirs: map[int32]string{}}
	return w, w.scan(w.root, nil), nil
}

// scan walks dir, watching each directory before it is listed (nothing
// created after the listing is missed), and appends the protected files
// to found.
func (w *coverWatch) scan(dir string, found []string) []string {
	if strings.EqualFold(filepath.Base(dir), ".git") && dir != w.root {
		return found
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, coverWatchMask)
	switch {
	case err == nil:
		w.dirs[int32(wd)] = dir // the same inode moved: the same descriptor, the new path
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
		return found // gone (or not a directory) since it was named
	case w.broken == "":
		w.broken = fmt.Sprintf("inotify watch on %s: %v", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return found // unreadable to the runner: it hides nothing the runner knows of
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			found = w.scan(p, found)
		case w.protected(p):
			found = append(found, p)
		}
	}
	return found
}

// take returns the protected files that appeared since the last take (or
// since newCoverWatch) and "" , or, when the watch could not be trusted,
// every protected file of the tree and why it was walked whole.
func (w *coverWatch) take() (found []string, walked string) {
	var created []string
	var buf [64 << 10]byte
	for {
		n, err := unix.Read(w.fd, buf[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			if err != nil && !errors.Is(err, unix.EAGAIN) && w.broken == "" {
				w.broken = fmt.Sprintf("inotify read: %v", err)
			}
			break
		}
		created = w.parse(buf[:n], created)
	}
	if w.broken != "" {
		walked, w.broken = w.broken, ""
		return w.scan(w.root, nil), walked
	}
	for _, p := range created {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			// gone again: nothing to cover
		case fi.IsDir():
			found = w.scan(p, found)
		case w.protected(p):
			found = append(found, p)
		}
	}
	return found, ""
}

// parse reads inotify_event records (wd i32, mask u32, cookie u32, len
// u32, name[len] NUL-padded) and appends the paths created or moved in.
func (w *coverWatch) parse(b []byte, created []string) []string {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			break
		}
		name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:end]), "\x00")
		b = b[end:]
		dir, ok := w.dirs[ev.Wd]
		switch {
		case ev.Mask&unix.IN_Q_OVERFLOW != 0:
			if w.broken == "" {
				w.broken = "inotify queue overflow"
			}
		case !ok:
		case ev.Mask&unix.IN_IGNORED != 0:
			delete(w.dirs, ev.Wd)
		case name != "":
			created = append(created, filepath.Join(dir, name))
		}
	}
	return created
}

func (w *coverWatch) close() { _ = unix.Close(w.fd) }
