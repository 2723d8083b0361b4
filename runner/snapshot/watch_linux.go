//go:build linux

package snapshot

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchMask is what a watched directory reports: entries created,
// deleted, moved, written or changed in mode, and the directory itself
// going away. IN_EXCL_UNLINK drops events from files already unlinked.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF |
	unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// watcher records, with inotify, the work-tree paths that changed since
// the last sync. Every directory a walk reads is watched (the watch is
// added before the directory is read, so nothing written after the read
// is missed); a directory that appears is rescanned whole at the next
// sync, which adds its watches. When the kernel queue overflows, a watch
// cannot be added (fs.inotify.max_user_watches) or the root goes away,
// the watcher is broken until the next full walk, which TrackChanged then
// does, saying why.
type watcher struct {
	fd   int
	root string // absolute work tree, no trailing slash

	mu      sync.Mutex
	wds     map[int32]string // watch descriptor → work-tree-relative dir ("" root)
	changed map[string]bool  // paths changed since the last sync
	broken  string           // why the watch cannot be trusted; "" when it can
}

// newWatcher starts an inotify instance for the work tree root. It fails
// where inotify is unavailable or out of instances.
func newWatcher(root string) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		if errors.Is(err, unix.EMFILE) {
			return nil, fmt.Errorf("inotify: too many instances (fs.inotify.max_user_instances): %w", err)
		}
		return nil, fmt.Errorf("inotify: %w", err)
	}
	return &watcher{fd: fd, root: root, wds: map[int32]string{}, changed: map[string]bool{}}, nil
}

// add watches the directory rel (abs is its absolute path). Errors other
// than the directory having vanished break the watcher.
func (w *watcher) add(abs, rel string) {
	wd, err := unix.InotifyAddWatch(w.fd, abs, watchMask)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err == nil:
		w.wds[int32(wd)] = rel
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
		w.changed[rel] = true // gone (or replaced) since it was listed
	case errors.Is(err, unix.ENOSPC):
		w.brokenLocked(fmt.Sprintf("inotify watch limit reached (fs.inotify.max_user_watches=%s)", sysctl("fs/inotify/max_user_watches")))
	default:
		w.brokenLocked(fmt.Sprintf("inotify watch on %s: %v", displayRel(rel), err))
	}
}

func (w *watcher) brokenLocked(reason string) {
	if w.broken == "" {
		w.broken = reason
	}
}

// reset forgets the changes and the breakage before a full walk, which
// re-adds the watches of every directory it reads.
func (w *watcher) reset() {
	w.drain()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.changed = map[string]bool{}
	w.broken = ""
}

// take drains the queue and returns the changed paths (sorted) and why
// they cannot be trusted ("" when they can), clearing both.
func (w *watcher) take() ([]string, string) {
	w.drain()
	w.mu.Lock()
	defer w.mu.Unlock()
	paths := make([]string, 0, len(w.changed))
	for p := range w.changed {
		paths = append(paths, p)
	}
	broken := w.broken
	w.changed, w.broken = map[string]bool{}, ""
	sortPaths(paths)
	return paths, broken
}

// drain reads every queued event.
func (w *watcher) drain() {
	var buf [64 << 10]byte
	for {
		n, err := unix.Read(w.fd, buf[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			if err != nil && !errors.Is(err, unix.EAGAIN) {
				w.mu.Lock()
				w.brokenLocked(fmt.Sprintf("inotify read: %v", err))
				w.mu.Unlock()
			}
			return
		}
		w.parse(buf[:n])
	}
}

// parse handles inotify_event records (wd i32, mask u32, cookie u32,
// len u32, name[len] NUL-padded).
func (w *watcher) parse(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			return
		}
		name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:end]), "\x00")
		b = b[end:]
		w.event(ev.Wd, ev.Mask, name)
	}
}

func (w *watcher) event(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		w.brokenLocked("inotify queue overflow")
		return
	}
	dir, ok := w.wds[wd]
	if !ok {
		return
	}
	switch {
	case mask&unix.IN_IGNORED != 0:
		delete(w.wds, wd)
		return
	case mask&unix.IN_UNMOUNT != 0:
		w.brokenLocked("a file system was unmounted in the work tree")
		return
	case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
		if dir == "" {
			w.brokenLocked("the work tree itself was moved or deleted")
			return
		}
		w.changed[dir] = true
		return
	}
	if name == "" || name == ".git" {
		return
	}
	w.changed[joinRel(dir, name)] = true
}

func (w *watcher) close() error { return unix.Close(w.fd) }

func sysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

func displayRel(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}
