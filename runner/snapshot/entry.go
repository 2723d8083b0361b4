package snapshot

import (
	"bufio"
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

// hashEntry stores the content of a file or symlink entry and sets its
// hash. A file that changed size while read is marked racy. A regular
// file larger than UnhashedLimit is not read: its hash is unhashedID of
// its stat. ctx ends the reading of a large file between blocks.
func (s *Store) hashEntry(ctx context.Context, abs string, e entry) (entry, bool, error) {
	if e.mode == modeSymlink {
		target, err := os.Readlink(abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return e, false, nil
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
	h, n, err := s.objects.writeFileBlob(ctx, abs, e.st.size)
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
func resolveHead(gitDir string) (plumbing.Hash, bool) {
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	ref := "HEAD"
	for range 10 {
		b, err := os.ReadFile(filepath.Join(gitDir, ref))
		if err != nil {
			b, err = os.ReadFile(filepath.Join(common, ref))
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
	f, err := os.Open(filepath.Join(common, "packed-refs"))
	if err != nil {
		return plumbing.ZeroHash, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		h, name, ok := strings.Cut(sc.Text(), " ")
		if ok && name == ref && len(h) == 40 {
			return plumbing.NewHash(h), true
		}
	}
	return plumbing.ZeroHash, false
}
