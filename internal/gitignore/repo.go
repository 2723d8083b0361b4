package gitignore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Repo locates the user's repository around a work tree. Everything in it
// is only ever opened for reading.
type Repo struct {
	Root      string // top-level directory of the repository
	Prefix    string // work tree relative to Root: "" or "sub/dir/"
	GitDir    string // the .git directory (a gitfile followed)
	CommonDir string // objects, info/exclude and config live here
}

// FindRepo walks up from workTree (absolute, symlinks resolved) to the
// first directory holding a .git entry. It returns nil, nil when there is
// none; an error only when a .git entry cannot be read.
func FindRepo(workTree string) (*Repo, error) {
	dir := workTree
	for {
		gitDir, err := ResolveDotGit(filepath.Join(dir, ".git"))
		if err != nil {
			return nil, err
		}
		if gitDir != "" {
			r := &Repo{Root: dir, GitDir: gitDir, CommonDir: gitDir}
			if rel, err := filepath.Rel(dir, workTree); err == nil && rel != "." {
				r.Prefix = filepath.ToSlash(rel) + "/"
			}
			if b, err := ReadRegular(filepath.Join(gitDir, "commondir")); err == nil {
				c := strings.TrimSpace(string(b))
				if !filepath.IsAbs(c) {
					c = filepath.Join(gitDir, c)
				}
				r.CommonDir = filepath.Clean(c)
			}
			return r, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, nil
		}
		dir = parent
	}
}

// ResolveDotGit returns the git directory that the .git entry p names: p
// itself when it is a directory holding HEAD, the target of a "gitdir:"
// file, or "" when p is missing or not a repository.
func ResolveDotGit(p string) (string, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		if os.IsNotExist(err) || os.IsPermission(err) {
			return "", nil
		}
		return "", fmt.Errorf("stat %s: %w", p, err)
	}
	dir := p
	if fi.Mode().IsRegular() {
		b, err := ReadRegular(p) // a FIFO swapped in since the lstat must not hang
		if err != nil {
			return "", fmt.Errorf("read gitfile %s: %w", p, err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		d, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return "", nil
		}
		dir = strings.TrimSpace(d)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(p), dir)
		}
	} else if !fi.IsDir() {
		return "", nil
	}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return "", nil
	}
	return filepath.Clean(dir), nil
}
