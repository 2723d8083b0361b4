package safefs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrSymlink is the error of a path that leads through a symlink, or
// names one where a regular file or directory is wanted.
var ErrSymlink = errors.New("a symlink is in the way (not followed)")

// ErrNotRegular is the error of a read of something other than a regular
// file (a FIFO, a device, a directory).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is the error of a read of a file over the caller's limit.
var ErrTooLarge = errors.New("file over the read limit")

// Root is a directory the repairs stay beneath. Its methods are safe for
// concurrent use.
type Root struct {
	dir      string
	mu       sync.Mutex
	replaced []string // root-relative slash paths removed because they were in the way
}

// New returns the Root at dir (absolute, resolved by the caller).
func New(dir string) *Root { return &Root{dir: filepath.Clean(dir)} }

// Dir is the root's directory.
func (r *Root) Dir() string { return r.dir }

// Replaced returns, sorted, the root-relative slash paths that were a
// symlink or a file where a write needed a directory (or a directory
// where it needed a file) and were removed whole; it forgets them.
func (r *Root) Replaced() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Compact(slices.Sorted(slices.Values(r.replaced)))
	r.replaced = nil
	return out
}

func (r *Root) noteReplaced(rel string) {
	r.mu.Lock()
	r.replaced = append(r.replaced, rel)
	r.mu.Unlock()
}

// followLinks switches every operation to the plain os calls, which follow
// symlinks: the control of the attack tests (SetFollowLinks).
var followLinks atomic.Bool

// SetFollowLinks makes every Root follow symlinks as plain os calls do
// (on) or not (off, the default). For tests only: it is the switched-off
// fix that shows an attack test's attack works.
func SetFollowLinks(on bool) { followLinks.Store(on) }

// Info is what a stat says of an entry, the entry itself (never a
// symlink's target).
type Info struct {
	Mode    fs.FileMode
	Size    int64
	ModTime int64 // ns since the epoch
	Ino     uint64
	Uid     uint32
}

// IsDir reports whether the entry is a directory.
func (i Info) IsDir() bool { return i.Mode.IsDir() }

// split checks rel (a root-relative path, either separator) and returns
// its components; "" and "." give none (the root).
func split(rel string) ([]string, error) {
	rel = filepath.ToSlash(rel)
	if rel == "" || rel == "." {
		return nil, nil
	}
	clean := path.Clean(rel)
	if !filepath.IsLocal(filepath.FromSlash(clean)) || strings.HasPrefix(clean, "../") || clean == ".." {
		return nil, fmt.Errorf("safefs: %q is not a path beneath the root", rel)
	}
	return strings.Split(clean, "/"), nil
}

// pathErr names the root-relative components parts in an error.
func (r *Root) pathErr(op string, parts []string, err error) error {
	if errors.Is(err, unix.ELOOP) {
		err = ErrSymlink
	}
	return &fs.PathError{Op: op, Path: filepath.Join(r.dir, filepath.Join(parts...)), Err: err}
}

// dirFd opens the directory of the components parts. With fix, a
// missing one is made and a symlink or non-directory in the way is
// removed (noted in Replaced) and made a directory.
func (r *Root) dirFd(parts []string, fix bool) (int, error) {
	fd, err := openRoot(r.dir)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: r.dir, Err: err}
	}
	if len(parts) == 0 {
		return fd, nil
	}
	if !fix {
		if next, ok, err := openBeneath(fd, strings.Join(parts, "/")); ok {
			_ = unix.Close(fd)
			if err != nil {
				return -1, r.pathErr("open", parts, err)
			}
			return next, nil
		}
	}
	for i, c := range parts {
		next, err := openDirIn(fd, c)
		if err != nil && fix {
			next, err = r.fixDir(fd, c, parts[:i+1])
		} else if errors.Is(err, unix.ENOTDIR) {
			var st unix.Stat_t
			if fstatat(fd, c, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = ErrSymlink
			}
		}
		_ = unix.Close(fd)
		if err != nil {
			return -1, r.pathErr("open", parts[:i+1], err)
		}
		fd = next
	}
	return fd, nil
}

// fixDir makes the entry c of dirfd a directory: what is there instead
// (a symlink, a file) is removed whole and noted as replaced.
func (r *Root) fixDir(dirfd int, c string, parts []string) (int, error) {
	var st unix.Stat_t
	if err := fstatat(dirfd, c, &st); err == nil {
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return openDirIn(dirfd, c) // a directory we may not search: report that
		}
		if err := removeAllIn(dirfd, c); err != nil {
			return -1, err
		}
		r.noteReplaced(strings.Join(parts, "/"))
	}
	if err := unix.Mkdirat(dirfd, c, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, err
	}
	return openDirIn(dirfd, c)
}

// parent opens the directory holding rel's last component and returns
// it with that name; rel must not be the root.
func (r *Root) parent(rel string, fix bool) (int, string, []string, error) {
	parts, err := split(rel)
	if err != nil {
		return -1, "", nil, err
	}
	if len(parts) == 0 {
		return -1, "", nil, fmt.Errorf("safefs: %q names the root", rel)
	}
	fd, err := r.dirFd(parts[:len(parts)-1], fix)
	return fd, parts[len(parts)-1], parts, err
}

func (r *Root) join(rel string) string { return filepath.Join(r.dir, filepath.FromSlash(rel)) }

// Lstat returns the Info of the entry at rel itself; a symlinked parent
// is ErrSymlink.
func (r *Root) Lstat(rel string) (Info, error) {
	if followLinks.Load() {
		fi, err := os.Lstat(r.join(rel))
		if err != nil {
			return Info{}, err
		}
		return infoOf(fi), nil
	}
	parts, err := split(rel)
	if err != nil {
		return Info{}, err
	}
	if len(parts) == 0 {
		fd, err := r.dirFd(nil, false)
		if err != nil {
			return Info{}, err
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return Info{}, r.pathErr("stat", nil, err)
		}
		return statInfo(&st), nil
	}
	fd, name, parts, err := r.parent(rel, false)
	if err != nil {
		return Info{}, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := fstatat(fd, name, &st); err != nil {
		return Info{}, r.pathErr("lstat", parts, err)
	}
	return statInfo(&st), nil
}

// Open opens the regular file at rel for reading; a symlink anywhere on
// the way is ErrSymlink, a FIFO or device ErrNotRegular (never blocks).
func (r *Root) Open(rel string) (*os.File, error) {
	if followLinks.Load() {
		return os.Open(r.join(rel))
	}
	fd, name, parts, err := r.parent(rel, false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	f, err := openFileIn(fd, name, r.join(rel))
	if err != nil {
		return nil, r.pathErr("open", parts, err)
	}
	return f, nil
}

// OpenDirFd opens the directory rel ("" or "." the root) for *at calls
// (O_PATH on Linux); a symlink on the way is ErrSymlink. Close the
// descriptor with unix.Close.
func (r *Root) OpenDirFd(rel string) (int, error) {
	if followLinks.Load() {
		return openat(unix.AT_FDCWD, r.join(rel), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	parts, err := split(rel)
	if err != nil {
		return -1, err
	}
	return r.dirFd(parts, false)
}

// Readlink returns the target of the symlink at rel, the link itself
// (a symlinked parent is ErrSymlink); the target is not followed.
func (r *Root) Readlink(rel string) (string, error) {
	if followLinks.Load() {
		return os.Readlink(r.join(rel))
	}
	fd, name, parts, err := r.parent(rel, false)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(fd, name, buf)
		if err != nil {
			return "", r.pathErr("readlink", parts, err)
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 2*len(buf))
	}
}

// ReadFile reads the regular file at rel, as Open; max ≥ 0 bounds its
// size (ErrTooLarge beyond).
func (r *Root) ReadFile(rel string, max int64) ([]byte, error) {
	if followLinks.Load() {
		return os.ReadFile(r.join(rel))
	}
	f, err := r.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, max)
}

// openFileIn opens name in dirfd read-only, not following a symlink and
// never blocking on a FIFO, and checks it is a regular file.
func openFileIn(dirfd int, name, full string) (*os.File, error) {
	fd, err := openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		_ = unix.Close(fd)
		return nil, ErrNotRegular
	}
	return os.NewFile(uintptr(fd), full), nil
}

func readAll(f *os.File, max int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if max >= 0 && fi.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: f.Name(), Err: ErrTooLarge}
	}
	var rd io.Reader = f
	if max >= 0 {
		rd = io.LimitReader(f, max+1)
	}
	// Sized from the stat, with room to see EOF: io.ReadAll's doublings
	// allocated twice a 2.4 MB .git/index read whole.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	_, err = buf.ReadFrom(rd)
	data := buf.Bytes()
	if err == nil && max >= 0 && int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: f.Name(), Err: ErrTooLarge}
	}
	return data, err
}

// WriteFile puts data at rel with the mode perm: written to a new file
// beside it and renamed over whatever is there (a symlink, a hard link, a
// directory: replaced whole, never written through). Missing parents are
// made; a symlink or file in a parent's place is replaced (Replaced).
func (r *Root) WriteFile(rel string, data []byte, perm fs.FileMode) error {
	if followLinks.Load() {
		p := r.join(rel)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, perm); err != nil {
			return err
		}
		return os.Chmod(p, perm)
	}
	fd, name, parts, err := r.parent(rel, true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	tmp, err := writeTemp(fd, name, data, perm)
	if err != nil {
		return r.pathErr("write", parts, err)
	}
	err = unix.Renameat(fd, tmp, fd, name)
	if err != nil && (errors.Is(err, unix.EISDIR) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST)) {
		if err = removeAllIn(fd, name); err == nil {
			r.noteReplaced(strings.Join(parts, "/"))
			err = unix.Renameat(fd, tmp, fd, name)
		}
	}
	if err != nil {
		_ = unix.Unlinkat(fd, tmp, 0)
		return r.pathErr("write", parts, err)
	}
	return nil
}

// tempSeq numbers the temporary names of WriteFile.
var tempSeq atomic.Uint64

// writeTemp writes data to a new file in dirfd and returns its name.
func writeTemp(dirfd int, name string, data []byte, perm fs.FileMode) (string, error) {
	for {
		tmp := ".safefs-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(tempSeq.Add(1), 10)
		if len(tmp)+len(name) < 200 {
			tmp += "-" + name
		}
		fd, err := openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return "", err
		}
		f := os.NewFile(uintptr(fd), tmp)
		_, err = f.Write(data)
		if err == nil {
			err = f.Chmod(perm)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = unix.Unlinkat(dirfd, tmp, 0)
			return "", err
		}
		return tmp, nil
	}
}

// Create makes a new empty file at rel for reading and writing, after
// removing whatever is there (not followed); parents as WriteFile.
func (r *Root) Create(rel string, perm fs.FileMode) (*os.File, error) {
	return r.openFile(rel, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm, true)
}

// OpenFile opens rel with flag (os.O_*; O_NOFOLLOW is added, so a
// symlink there is ErrSymlink); parents as WriteFile.
func (r *Root) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	return r.openFile(rel, flag, perm, false)
}

func (r *Root) openFile(rel string, flag int, perm fs.FileMode, replace bool) (*os.File, error) {
	if followLinks.Load() {
		p := r.join(rel)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if replace {
			flag = flag&^os.O_EXCL | os.O_TRUNC
		}
		return os.OpenFile(p, flag, perm)
	}
	fd, name, parts, err := r.parent(rel, true)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if replace {
		if err := removeAllIn(fd, name); err != nil {
			return nil, r.pathErr("remove", parts, err)
		}
	}
	nf, err := openat(fd, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, r.pathErr("open", parts, err)
	}
	return os.NewFile(uintptr(nf), r.join(rel)), nil
}

// MkdirAll makes rel and its parents directories, replacing a symlink
// or file in the way of any (Replaced); perm is for those it makes.
func (r *Root) MkdirAll(rel string, perm fs.FileMode) error {
	if followLinks.Load() {
		return os.MkdirAll(r.join(rel), perm)
	}
	parts, err := split(rel)
	if err != nil {
		return err
	}
	fd, err := r.dirFd(parts, true)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// Remove removes the entry at rel (a directory with what it holds),
// never following a symlink: a link is removed itself. Nothing there, or
// a symlinked parent (the entry is not beneath the root), is no error.
func (r *Root) Remove(rel string) error {
	if followLinks.Load() {
		return os.RemoveAll(r.join(rel))
	}
	fd, name, parts, err := r.parent(rel, false)
	if err != nil {
		if errors.Is(err, ErrSymlink) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer unix.Close(fd)
	if err := removeAllIn(fd, name); err != nil {
		return r.pathErr("remove", parts, err)
	}
	return nil
}

// removeAllIn removes name in dirfd and, for a directory, what it holds.
func removeAllIn(dirfd int, name string) error {
	err := unix.Unlinkat(dirfd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	var st unix.Stat_t
	if serr := fstatat(dirfd, name, &st); serr != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return err
	}
	fd, oerr := openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(oerr, unix.EACCES) && chmodIn(dirfd, name, 0o700) == nil {
		fd, oerr = openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if oerr != nil {
		return oerr
	}
	names, lerr := readNames(fd)
	var errs []error
	if lerr != nil {
		errs = append(errs, lerr)
	}
	for _, n := range names {
		if e := removeAllIn(fd, n); e != nil {
			errs = append(errs, e)
		}
	}
	_ = unix.Close(fd)
	if err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// readNames lists the directory fd (left open).
func readNames(fd int) ([]string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	names, err := f.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

// Chmod sets the mode bits (permissions, setuid, setgid, sticky) of the
// entry at rel itself; a symlink there or on the way is ErrSymlink.
func (r *Root) Chmod(rel string, mode fs.FileMode) error {
	if followLinks.Load() {
		return os.Chmod(r.join(rel), mode)
	}
	fd, name, parts, err := r.parent(rel, false)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := chmodIn(fd, name, mode); err != nil {
		return r.pathErr("chmod", parts, err)
	}
	return nil
}

// unixMode is mode as chmod(2) takes it.
func unixMode(m fs.FileMode) uint32 {
	b := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		b |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		b |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		b |= unix.S_ISVTX
	}
	return b
}

// fstatat is fstatat(2) of name in dirfd, not following a symlink,
// retried on EINTR.
func fstatat(dirfd int, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// openat is openat(2), retried on EINTR.
func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, perm)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// statInfo converts a stat.
func statInfo(st *unix.Stat_t) Info {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return Info{Mode: m, Size: st.Size, ModTime: mtimeOf(st), Ino: uint64(st.Ino), Uid: st.Uid}
}

// infoOf converts an os FileInfo (the followLinks path).
func infoOf(fi fs.FileInfo) Info {
	i := Info{Mode: fi.Mode(), Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		i.Ino, i.Uid = uint64(st.Ino), st.Uid
	}
	return i
}
