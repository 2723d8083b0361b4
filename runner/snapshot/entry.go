package snapshot

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

	"github.com/seed43ef5acb/runner/internal/gitignore"
	"github.com/seed43ef5acb/runner/internal/treewalk"
)

// statEntry lstats name in the directory open as dirfd (or abs when
// dirfd is -1; fstatat spares the kernel a full path lookup per file)
// and returns an entry with mode and stat filled in. ok is false for
// paths that vanished or are not files or symlinks.
func (s *Store) statEntry(dirfd int, abs, name string, scanStart int64) (entry, bool, error) {
	var st unix.Stat_t
	var err error
	for {
		if dirfd >= 0 {
			err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		} else {
			err = unix.Lstat(abs, &st)
		}
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return entry{}, false, nil
		}
		return entry{}, false, fmt.Errorf("stat %s: %w", abs, err)
	}
	e := entry{name: name}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		e.mode = modeSymlink
	case unix.S_IFREG:
		e.mode = modeFile
		if st.Mode&0o100 != 0 {
			e.mode = modeExec
		}
	default:
		return entry{}, false, nil
	}
	e.st = statInfo{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: uint32(st.Ino)}
	e.st.racy = e.st.mtime >= scanStart-racyWindow || e.st.ctime >= scanStart-racyWindow
	return e, true, nil
}

// hashEntry stores the content of a file or symlink entry (e.name in
// the directory open as dirfd; abs names it in errors) and sets its
// hash. The entry is opened without following a symlink and without
// blocking, so a link or FIFO swapped in since the stat is never read
// through. A file that changed size while read is marked racy. A
// regular file larger than UnhashedLimit is not read: its hash is
// unhashedID of its stat. ctx ends the reading of a large file between
// blocks.
func (s *Store) hashEntry(ctx context.Context, dirfd int, abs string, e entry) (entry, bool, error) {
	if e.mode == modeSymlink {
		target, err := readlinkIn(dirfd, e.name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.EINVAL) {
				return e, false, nil // gone, or no longer a link
			}
			return e, false, fmt.Errorf("read link %s: %w", abs, err)
		}
		e.hash, err = s.objects.writeBytes(plumbing.BlobObject, []byte(target))
		return e, true, err
	}
	if e.st.size > UnhashedLimit {
		e.hash = unhashedID(e.st)
		return e, true, nil
	}
	open := func() (*os.File, error) { return openRegularIn(dirfd, e.name, abs) }
	h, n, err := s.objects.writeFileBlob(ctx, open, abs, e.st.size)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return e, false, nil
		}
		return e, false, err
	}
	e.hash = h
	if n != e.st.size {
		e.st.racy = true
	}
	return e, true, nil
}

// openRegularIn opens the regular file name in dirfd for reading: a
// symlink, FIFO or device there now (swapped in since its stat) counts
// as gone (fs.ErrNotExist), never followed or waited on.
func openRegularIn(dirfd int, name, abs string) (*os.File, error) {
	fd, err := treewalk.OpenIn(dirfd, name, false)
	if errors.Is(err, unix.ELOOP) {
		err = fs.ErrNotExist
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		treewalk.CloseFd(fd)
		return nil, &fs.PathError{Op: "stat", Path: abs, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		treewalk.CloseFd(fd)
		return nil, &fs.PathError{Op: "open", Path: abs, Err: fs.ErrNotExist}
	}
	return os.NewFile(uintptr(fd), abs), nil
}

// readlinkIn reads the target of the symlink name in dirfd.
func readlinkIn(dirfd int, name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 2*len(buf))
	}
}

// storeTree encodes node's entries, stores the tree and sets node.tree.
func (s *Store) storeTree(node *dirNode) error {
	h, err := s.objects.writeBytes(plumbing.TreeObject, encodeTree(node.entries))
	if err != nil {
		return err
	}
	node.tree, node.valid = h, true
	return nil
}

// gitlinkHead returns the commit checked out in the nested repository at
// the work-tree path rel, or fallback (the index's gitlink) when it has
// none. ok is false when neither is known.
func (s *Store) gitlinkHead(rel string, fallback plumbing.Hash) (plumbing.Hash, bool) {
	gitDir, err := gitignore.ResolveDotGit(filepath.Join(s.root, rel, ".git"))
	if err == nil && gitDir != "" {
		if h, ok := resolveHead(gitDir); ok {
			return h, true
		}
	}
	return fallback, !fallback.IsZero()
}

// resolveHead reads HEAD of a git directory through loose and packed refs.
// A command may have made the nested repository: every file is read
// without following a final symlink and without blocking on a FIFO.
func resolveHead(gitDir string) (plumbing.Hash, bool) {
	common := gitDir
	if b, err := gitignore.ReadRegular(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	ref := "HEAD"
	for range 10 {
		b, err := gitignore.ReadRegular(filepath.Join(gitDir, ref))
		if err != nil {
			b, err = gitignore.ReadRegular(filepath.Join(common, ref))
		}
		if err != nil {
			return packedRef(common, ref)
		}
		v := strings.TrimSpace(string(b))
		if r, ok := strings.CutPrefix(v, "ref:"); ok {
			ref = strings.TrimSpace(r)
			continue
		}
		h := plumbing.NewHash(v)
		return h, !h.IsZero() && len(v) == 40
	}
	return plumbing.ZeroHash, false
}

func packedRef(common, ref string) (plumbing.Hash, bool) {
	b, err := gitignore.ReadRegular(filepath.Join(common, "packed-refs"))
	if err != nil {
		return plumbing.ZeroHash, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		h, name, ok := strings.Cut(sc.Text(), " ")
		if ok && name == ref && len(h) == 40 {
			return plumbing.NewHash(h), true
		}
	}
	return plumbing.ZeroHash, false
}
