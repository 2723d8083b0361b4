package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed43ef5acb/runner/tools/gitignore"
)

// TrackPaths is the fast path after tools that report the paths they
// wrote: it re-stats only paths (work-tree-relative slash paths, or
// absolute paths inside the work tree; others are ignored) and reuses the
// rest of the last tracked state. It falls back to a full Track when there
// is no previous state in this Store, when the user's index changed, or
// when a path is a directory or a .gitignore file.
func (s *Store) TrackPaths(ctx context.Context, paths []string) (Tree, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrClosed
	}
	if s.state == nil {
		return s.track(ctx)
	}
	tracked, err := loadTracked(s.repo, s.tracked)
	if err != nil {
		return "", err
	}
	if tracked != s.tracked {
		return s.track(ctx)
	}
	scanStart := time.Now().UnixNano()
	root := s.state
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		rel, ok := s.relPath(p)
		if !ok {
			continue
		}
		var full bool
		root, full, err = s.updatePath(root, rel, scanStart)
		if err != nil {
			return "", err
		}
		if full {
			return s.track(ctx)
		}
	}
	if err := s.rehash(root); err != nil {
		return "", err
	}
	if root != s.state {
		s.state, s.cacheDirty = root, true
	}
	return Tree(root.tree.String()), nil
}

// relPath turns a caller's path into a clean work-tree-relative slash
// path. ok is false for paths outside the work tree or inside .git.
func (s *Store) relPath(p string) (string, bool) {
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(s.root, p)
		if err != nil {
			return "", false
		}
		p = r
	}
	p = filepath.ToSlash(filepath.Clean(p))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return "", false
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".git" {
			return "", false
		}
	}
	return p, true
}

// updatePath brings one path of the state up to date. full asks for a
// full Track instead.
func (s *Store) updatePath(root *dirNode, rel string, scanStart int64) (*dirNode, bool, error) {
	if strings.HasSuffix("/"+rel, "/.gitignore") {
		return root, true, nil
	}
	abs := filepath.Join(s.root, rel)
	if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
		return root, true, nil
	}
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	e, exists, err := s.statEntry(-1, abs, name, scanStart)
	if err != nil {
		return root, false, err
	}
	if exists && s.included(rel) {
		if old := lookup(root, rel); old == nil || old.mode != e.mode || !old.st.sameStat(e.st) {
			if e, exists, err = s.hashEntry(abs, e); err != nil {
				return root, false, err
			}
		} else {
			e.hash = old.hash
		}
	} else {
		exists = false
	}
	var ep *entry
	if exists {
		ep = &e
	}
	return setPath(root, strings.Split(rel, "/"), ep), false, nil
}

// included reports whether a file at rel belongs to snapshots: tracked in
// the index, or untracked, outside nested repositories and excluded
// directories, and not ignored.
func (s *Store) included(rel string) bool {
	comps := strings.Split(rel, "/")
	for i := range comps {
		if s.exclude[strings.Join(comps[:i+1], "/")] {
			return false
		}
	}
	if _, ok := s.tracked.files[rel]; ok {
		return true
	}
	stack, dir := s.base, ""
	for i, c := range comps {
		if b, err := gitignore.ReadRegular(filepath.Join(s.root, dir, ".gitignore")); err == nil {
			base := s.prefix
			if dir != "" {
				base += dir + "/"
			}
			stack = stack.Push(gitignore.ParseFile(b, base))
		}
		p := joinRel(dir, c)
		if i == len(comps)-1 {
			return !stack.Excluded(s.prefix+p, false)
		}
		if _, err := os.Lstat(filepath.Join(s.root, p, ".git")); err == nil {
			return false // inside a nested repository
		}
		if stack.Excluded(s.prefix+p, true) {
			return false
		}
		dir = p
	}
	return false
}

// lookup finds the entry at rel in the state.
func lookup(d *dirNode, rel string) *entry {
	comps := strings.Split(rel, "/")
	for i, c := range comps {
		j := d.find(c)
		if j < 0 {
			return nil
		}
		e := &d.entries[j]
		if i == len(comps)-1 {
			return e
		}
		if e.mode != modeDir {
			return nil
		}
		d = e.dir
	}
	return nil
}

// setPath returns a copy of d with the entry at comps set to e, or removed
// when e is nil. Only nodes on the path are copied (and marked for
// rehashing); d itself is not modified. Emptied directories disappear.
func setPath(d *dirNode, comps []string, e *entry) *dirNode {
	i := d.find(comps[0])
	if e == nil && i < 0 {
		return d
	}
	nd := &dirNode{}
	if d != nil {
		nd.entries = slices.Clone(d.entries)
	}
	if len(comps) == 1 {
		if i >= 0 {
			nd.entries = slices.Delete(nd.entries, i, i+1)
		}
		if e != nil {
			nd.entries = append(nd.entries, *e)
			sortEntries(nd.entries)
		}
		return nd
	}
	var child *dirNode
	if i >= 0 && nd.entries[i].mode == modeDir {
		child = nd.entries[i].dir
	} else if i >= 0 && e == nil {
		return d // a file or gitlink where a directory was expected
	}
	if i >= 0 && nd.entries[i].mode == modeGitlink {
		return d // never write into a nested repository
	}
	nc := setPath(child, comps[1:], e)
	if nc == child {
		return d
	}
	if i >= 0 {
		nd.entries = slices.Delete(nd.entries, i, i+1)
	}
	if len(nc.entries) > 0 {
		nd.entries = append(nd.entries, entry{name: comps[0], mode: modeDir, dir: nc})
		sortEntries(nd.entries)
	}
	return nd
}

// rehash computes the trees of nodes changed by setPath, bottom-up.
func (s *Store) rehash(d *dirNode) error {
	if d.valid {
		return nil
	}
	for i := range d.entries {
		e := &d.entries[i]
		if e.mode != modeDir {
			continue
		}
		if err := s.rehash(e.dir); err != nil {
			return err
		}
		e.hash = e.dir.tree
	}
	return s.storeTree(d)
}
