package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/tools/gitignore"
)

// walkEntry is one entry found by walkTree.
type walkEntry struct {
	Rel   string // work-tree-relative slash path
	Depth int    // 1 for a direct child of the start directory
	Dir   bool   // a directory (symlinks are never directories here)
	Entry fs.DirEntry
}

// walkTree visits the entries below the work-tree-relative directory
// start, in lexical order, depth first. It never follows symlinks, skips
// every .git, skips what git ignores (package gitignore: the global
// excludes file, info/exclude, the .gitignore files of the root, of the
// start directory's ancestors and nested ones), and skips entries the
// context's PathFilter refuses. A start directory that is itself ignored
// is walked anyway (it was asked for), applying only the .gitignore files
// inside it. fn may return fs.SkipDir for a directory, or errStopWalk to
// end the walk.
func walkTree(ctx context.Context, root, start string, fn func(walkEntry) error) error {
	w := &walker{root: root, filter: pathFilter(ctx), fn: fn}
	st := w.initialRules(start)
	err := w.dir(ctx, start, 0, st)
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

type walker struct {
	root   string
	prefix string // the work tree inside its repository: "" or "dir/"
	filter PathFilter
	fn     func(walkEntry) error
}

// initialRules loads the rules that apply at start: the repository's base
// rules and the .gitignore files of the directories above start. When
// start or a parent is ignored, none apply (it was asked for).
func (w *walker) initialRules(start string) *gitignore.Stack {
	repo, _ := gitignore.FindRepo(w.root) // unreadable .git: no repository rules
	if repo != nil {
		w.prefix = repo.Prefix
	}
	st := gitignore.Base(repo, gitignore.LoadConfig(os.Getenv, repo))
	if start == "." {
		return st
	}
	if gitignore.PathExcluded(w.root, st, w.prefix, start, true) {
		return nil
	}
	parts := strings.Split(start, "/")
	for i := range parts {
		dir := strings.Join(parts[:i], "/")
		st = st.Push(w.readIgnore(dir))
	}
	return st
}

// readIgnore parses the .gitignore of the work-tree-relative directory
// dir ("" or "." for the root), if it is a regular file.
func (w *walker) readIgnore(dir string) []gitignore.Pattern {
	if dir == "." {
		dir = ""
	}
	b, err := gitignore.ReadRegular(filepath.Join(w.root, filepath.FromSlash(dir), ".gitignore"))
	if err != nil {
		return nil
	}
	base := w.prefix
	if dir != "" {
		base += dir + "/"
	}
	return gitignore.ParseFile(b, base)
}

func (w *walker) dir(ctx context.Context, rel string, depth int, st *gitignore.Stack) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("walk: %w", context.Cause(ctx))
	}
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	entries, err := os.ReadDir(abs)
	if err != nil {
		if depth == 0 {
			return fmt.Errorf("read directory %s: %w", rel, err)
		}
		return nil // unreadable subdirectory: skip it
	}
	st = st.Push(w.readIgnore(rel))
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		child := e.Name()
		if rel != "." {
			child = rel + "/" + e.Name()
		}
		isDir := e.IsDir()
		if st.Excluded(w.prefix+child, isDir) || !w.filter(child) {
			continue
		}
		err := w.fn(walkEntry{Rel: child, Depth: depth + 1, Dir: isDir, Entry: e})
		switch {
		case errors.Is(err, fs.SkipDir):
			continue
		case err != nil:
			return err
		}
		if isDir {
			if err := w.dir(ctx, child, depth+1, st); err != nil {
				return err
			}
		}
	}
	return nil
}
