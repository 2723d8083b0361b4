package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
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
// every .git, skips what .gitignore files (the root's, the start
// directory's ancestors', and nested ones) and .git/info/exclude ignore,
// and skips entries the context's PathFilter refuses. A start directory
// that is itself ignored is walked anyway (it was asked for), applying only
// the .gitignore files inside it. fn may return
// fs.SkipDir for a directory, or errStopWalk to end the walk.
func walkTree(ctx context.Context, root, start string, fn func(walkEntry) error) error {
	w := &walker{root: root, filter: pathFilter(ctx), fn: fn}
	ps := w.initialPatterns(start)
	if insideIgnored(ps, start) {
		// asked for explicitly: show it, with only its own .gitignore files
		ps = nil
	}
	err := w.dir(ctx, start, 0, ps)
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

type walker struct {
	root   string
	filter PathFilter
	fn     func(walkEntry) error
}

// initialPatterns loads .git/info/exclude and the .gitignore files of the
// root and of every directory above start.
func (w *walker) initialPatterns(start string) []gitignore.Pattern {
	ps := readIgnoreFile(filepath.Join(w.root, ".git", "info", "exclude"), nil)
	if start == "." {
		return ps
	}
	parts := strings.Split(start, "/")
	for i := 0; i < len(parts); i++ {
		dir := parts[:i]
		ps = append(ps, readIgnoreFile(filepath.Join(w.root, filepath.FromSlash(path.Join(append(dir, ".gitignore")...))), dir)...)
	}
	return ps
}

func (w *walker) dir(ctx context.Context, rel string, depth int, ps []gitignore.Pattern) error {
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
	domain := splitRel(rel)
	ps = append(ps[:len(ps):len(ps)], readIgnoreFile(filepath.Join(abs, ".gitignore"), domain)...)
	m := gitignore.NewMatcher(ps)
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		child := e.Name()
		if rel != "." {
			child = rel + "/" + e.Name()
		}
		isDir := e.IsDir()
		if m.Match(splitRel(child), isDir) || !w.filter(child) {
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
			if err := w.dir(ctx, child, depth+1, ps); err != nil {
				return err
			}
		}
	}
	return nil
}

// insideIgnored reports whether start or one of its parents is ignored.
func insideIgnored(ps []gitignore.Pattern, start string) bool {
	parts := splitRel(start)
	m := gitignore.NewMatcher(ps)
	for i := 1; i <= len(parts); i++ {
		if m.Match(parts[:i], true) {
			return true
		}
	}
	return false
}

func splitRel(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// readIgnoreFile parses a gitignore file; a missing file has no patterns.
// go-git's matcher uses filepath.Match, which negates classes with '^', so
// git's "[!…]" is rewritten (go-git issue #2006); pruning ignored
// directories before descending gives git's rule that nothing inside an
// excluded directory can be re-included.
func readIgnoreFile(name string, domain []string) []gitignore.Pattern {
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		line = strings.ReplaceAll(line, "[!", "[^")
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}
