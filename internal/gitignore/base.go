package gitignore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Base loads the ignore rules that apply to a whole work tree, in git's
// order of increasing precedence: the global excludes file, the
// repository's info/exclude, then the .gitignore files of the directories
// between the repository root and the work tree (repo.Prefix). repo may be
// nil (a plain directory): then only the global excludes file applies.
// Missing files contribute nothing.
func Base(repo *Repo, cfg Config) *Stack {
	var st *Stack
	if b, err := os.ReadFile(cfg.ExcludesFile); err == nil && cfg.ExcludesFile != "" {
		st = st.Push(ParseFile(b, ""))
	}
	if repo == nil {
		return st
	}
	if b, err := ReadRegular(filepath.Join(repo.CommonDir, "info", "exclude")); err == nil { // a FIFO a command made there must not hang
		st = st.Push(ParseFile(b, ""))
	}
	dir, base := repo.Root, ""
	for _, c := range strings.Split(strings.TrimSuffix(repo.Prefix, "/"), "/") {
		if c == "" {
			break
		}
		if b, err := ReadRegular(filepath.Join(dir, ".gitignore")); err == nil {
			st = st.Push(ParseFile(b, base))
		}
		dir, base = filepath.Join(dir, c), base+c+"/"
	}
	return st
}

// MaxFile is the largest file ReadRegular reads (16 MiB), and the
// largest .gitignore the tree walk reads. A command can make a sparse
// file of any size in the work tree or a nested .git; read whole, one
// took the runner to 8.8 GB of memory.
const MaxFile = 16 << 20

// ErrTooLarge is ReadRegular's error for a file over MaxFile.
var ErrTooLarge = errors.New("larger than the 16 MiB the runner reads")

// ReadRegular reads a file that must not be a symlink (git does not follow
// a symlinked .gitignore); anything else gives os.ErrNotExist. It opens
// without blocking, so a FIFO a command put there cannot hang the caller,
// and it refuses a file over MaxFile (ErrTooLarge).
func ReadRegular(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, os.ErrNotExist
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, os.ErrNotExist
	}
	if fi.Size() > MaxFile {
		return nil, fmt.Errorf("%s: %w", p, ErrTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1)) // it may grow after the stat
	if err == nil && len(b) > MaxFile {
		return nil, fmt.Errorf("%s: %w", p, ErrTooLarge)
	}
	return b, err
}

// PathExcluded reports whether the work-tree-relative slash path rel (a
// directory when isDir) is ignored, as a top-down walk would find it: it
// or one of its parent directories is excluded. It reads the .gitignore of
// the work tree root (absolute) and of each directory on the way. base
// holds the rules from Base; prefix is Repo.Prefix ("" or "dir/").
func PathExcluded(root string, base *Stack, prefix, rel string, isDir bool) bool {
	comps := strings.Split(rel, "/")
	st, dir := base, ""
	for i, c := range comps {
		if b, err := ReadRegular(filepath.Join(root, filepath.FromSlash(dir), ".gitignore")); err == nil {
			b2 := prefix
			if dir != "" {
				b2 += dir + "/"
			}
			st = st.Push(ParseFile(b, b2))
		}
		p := c
		if dir != "" {
			p = dir + "/" + c
		}
		last := i == len(comps)-1
		if st.Excluded(prefix+p, !last || isDir) {
			return true
		}
		dir = p
	}
	return false
}
