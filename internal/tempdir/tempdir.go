// Package tempdir makes temporary directories that a later run can tell
// apart from a live run's: each holds a lock file that its process keeps
// locked (flock) for as long as it lives. The kernel drops the lock when
// the process dies, whatever killed it (SIGKILL included), so Collect,
// called when a run starts, removes exactly the directories whose owner is
// gone and never one in use. The runner's temporary directories (the
// --isolate copy, sandbox scratch, batch work trees, temporary clones) are
// made with New.
//
// Imports: the standard library only.
package tempdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// LockFile is the name of the lock file inside each directory.
const LockFile = ".runner-owner.lock"

// Dir is a temporary directory owned by this process.
type Dir struct {
	path string
	lock *os.File // flocked until Remove; nil once removed
}

// New creates a directory in parent ("" for os.TempDir) named by pattern
// as os.MkdirTemp does, and locks it. The lock file appears under its
// final name only once locked, so Collect never sees an unlocked lock
// file of a live process.
func New(parent, pattern string) (*Dir, error) {
	path, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	f, err := os.CreateTemp(path, ".lock-*")
	if err != nil {
		_ = os.RemoveAll(path)
		return nil, fmt.Errorf("temp dir %s: lock: %w", path, err)
	}
	if err := flock(f, false); err != nil {
		_ = f.Close()
		_ = os.RemoveAll(path)
		return nil, fmt.Errorf("temp dir %s: lock: %w", path, err)
	}
	if err := os.Rename(f.Name(), filepath.Join(path, LockFile)); err != nil {
		_ = f.Close()
		_ = os.RemoveAll(path)
		return nil, fmt.Errorf("temp dir %s: lock: %w", path, err)
	}
	return &Dir{path: path, lock: f}, nil
}

// Path is the directory's absolute path (symlinks resolved).
func (d *Dir) Path() string { return d.path }

// Remove deletes the directory and everything in it, then releases the
// lock. It is safe to call more than once and on a nil Dir.
func (d *Dir) Remove() error {
	if d == nil || d.lock == nil {
		return nil
	}
	err := removeAll(d.path)
	_ = d.lock.Close() // releases the flock
	d.lock = nil
	if err != nil {
		return fmt.Errorf("remove temp dir: %w", err)
	}
	return nil
}

// Keep leaves the directory in place for good (a batch's --keep work
// trees): its lock file is deleted, so no Collect ever takes it, and the
// lock released. Safe on a nil or removed Dir.
func (d *Dir) Keep() error {
	if d == nil || d.lock == nil {
		return nil
	}
	err := os.Remove(filepath.Join(d.path, LockFile))
	_ = d.lock.Close()
	d.lock = nil
	if err != nil {
		return fmt.Errorf("keep temp dir: %w", err)
	}
	return nil
}

// Collect removes the directories in parent ("" for os.TempDir) whose
// names match pattern (filepath.Match, e.g. "runner-run-*") and whose
// owner process is gone: they hold a LockFile that nobody has locked.
// Directories without a lock file (made by something else, or by a
// process killed in the instant between creating its directory and
// locking it) are left alone, and so are locked ones. It returns the
// directories removed; an error names the first that could not be.
func Collect(parent, pattern string) ([]string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	matches, err := filepath.Glob(filepath.Join(parent, pattern))
	if err != nil {
		return nil, fmt.Errorf("collect temp dirs: %w", err)
	}
	var removed []string
	var errs []error
	for _, dir := range matches {
		ok, err := collectOne(dir)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, dir)
		}
	}
	return removed, errors.Join(errs...)
}

// collectOne removes dir when its lock file can be locked.
func collectOne(dir string) (bool, error) {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return false, nil //nolint:nilerr // not a directory, or gone already
	}
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("collect %s: %w", dir, err)
	}
	defer f.Close()
	if err := flock(f, true); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil // its owner is alive
		}
		return false, fmt.Errorf("collect %s: %w", dir, err)
	}
	if err := removeAll(dir); err != nil {
		return false, fmt.Errorf("collect %s: %w", dir, err)
	}
	return true, nil
}

// flock takes an exclusive lock on f; nonblocking fails with EWOULDBLOCK
// when it is held.
func flock(f *os.File, nonblocking bool) error {
	how := syscall.LOCK_EX
	if nonblocking {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// removeAll is os.RemoveAll that also removes what a process left without
// search or write permission in its own directories (a sandboxed command
// that ran `chmod 000` on its $HOME): when the first try fails, every
// directory below path the caller may chmod is given u+rwx and it tries
// again.
func removeAll(path string) error {
	if err := os.RemoveAll(path); err == nil {
		return nil
	}
	var open func(dir string)
	open = func(dir string) {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			return
		}
		_ = os.Chmod(dir, fi.Mode().Perm()|0o700)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() {
				open(filepath.Join(dir, e.Name()))
			}
		}
	}
	open(path)
	return os.RemoveAll(path)
}
