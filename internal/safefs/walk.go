package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Entry is one entry met by Walk. It is valid only during the call of
// the walk's function.
type Entry struct {
	Rel  string // root-relative slash path
	Name string
	Info
	dirfd int // the directory holding it
	full  string
}

// ReadFile reads the entry when it is a regular file, as Root.ReadFile.
func (e *Entry) ReadFile(max int64) ([]byte, error) {
	if followLinks.Load() {
		return os.ReadFile(e.full)
	}
	f, err := openFileIn(e.dirfd, e.Name, e.full)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: e.full, Err: err}
	}
	defer f.Close()
	return readAll(f, max)
}

// Open opens the entry when it is a regular file, as Root.Open: to
// stream a file of any size, where ReadFile would hold it whole.
func (e *Entry) Open() (*os.File, error) {
	if followLinks.Load() {
		return os.Open(e.full)
	}
	f, err := openFileIn(e.dirfd, e.Name, e.full)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: e.full, Err: err}
	}
	return f, nil
}

// Walk calls fn for the entry at rel and, when it is a directory, for
// every entry below it, parents before children, each directory's
// entries in name order; it never follows a symlink (one is an entry
// like a file). rel "." walks the root's entries (fn is not called for
// the root). fn returning fs.SkipDir for a directory skips what it
// holds; another error stops the walk and is returned. A directory that
// cannot be listed is skipped; rel missing, or behind a symlink, is an
// error.
func (r *Root) Walk(rel string, fn func(*Entry) error) error {
	if followLinks.Load() {
		return r.walkFollowing(rel, fn)
	}
	parts, err := split(rel)
	if err != nil {
		return err
	}
	if len(parts) == 0 {
		fd, err := r.dirFd(nil, false)
		if err != nil {
			return err
		}
		lfd, err := openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		_ = unix.Close(fd)
		if err != nil {
			return r.pathErr("open", nil, err)
		}
		defer unix.Close(lfd)
		return r.walkDir(lfd, "", fn)
	}
	pfd, name, parts, err := r.parent(rel, false)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := fstatat(pfd, name, &st); err != nil {
		return r.pathErr("lstat", parts, err)
	}
	e := &Entry{Rel: strings.Join(parts, "/"), Name: name, Info: statInfo(&st), dirfd: pfd, full: r.join(rel)}
	if err := fn(e); err != nil || !e.IsDir() {
		if errors.Is(err, fs.SkipDir) {
			return nil
		}
		return err
	}
	fd, err := openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil //nolint:nilerr // an unreadable directory is skipped
	}
	defer unix.Close(fd)
	return r.walkDir(fd, e.Rel, fn)
}

// walkDir walks the entries of the open directory fd, at rel.
func (r *Root) walkDir(fd int, rel string, fn func(*Entry) error) error {
	names, err := readNames(fd)
	if err != nil {
		return nil //nolint:nilerr // an unlistable directory is skipped
	}
	for _, n := range names {
		var st unix.Stat_t
		if fstatat(fd, n, &st) != nil {
			continue // gone meanwhile
		}
		e := &Entry{Rel: path.Join(rel, n), Name: n, Info: statInfo(&st), dirfd: fd}
		e.full = r.join(e.Rel)
		err := fn(e)
		if errors.Is(err, fs.SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if !e.IsDir() {
			continue
		}
		sub, oerr := openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if oerr != nil {
			continue
		}
		err = r.walkDir(sub, e.Rel, fn)
		_ = unix.Close(sub)
		if err != nil {
			return err
		}
	}
	return nil
}

// walkFollowing is Walk by filepath.WalkDir on the joined path (the
// followLinks control: the path's parents are followed).
func (r *Root) walkFollowing(rel string, fn func(*Entry) error) error {
	start := r.join(rel)
	return filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // as Walk: skipped
		}
		if p == start && (rel == "" || rel == ".") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil //nolint:nilerr // gone meanwhile
		}
		r, _ := filepath.Rel(r.dir, p)
		return fn(&Entry{Rel: filepath.ToSlash(r), Name: d.Name(), Info: infoOf(fi), full: p})
	})
}
