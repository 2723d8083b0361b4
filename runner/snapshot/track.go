package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Track records the work tree and returns its tree. It walks every
// directory that is not ignored, lstats every file and hashes only files
// whose stat differs from the previous Track (or, on the first Track of a
// new store, from the user's index). Files and symlinks are stored as
// blobs, nested repositories as gitlinks.
func (s *Store) Track(ctx context.Context) (Tree, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrClosed
	}
	return s.track(ctx)
}

func (s *Store) track(ctx context.Context) (Tree, error) {
	tracked, err := loadTracked(s.repo, s.tracked)
	if err != nil {
		return "", err
	}
	prev := s.state
	if prev == nil {
		prev, err = s.loadCache()
		if err != nil && !errors.Is(err, ErrCorruptCache) {
			return "", err
		}
		if prev == nil && s.seedAllowed(tracked) {
			prev = seedState(tracked)
		}
	}
	if s.watch != nil {
		s.watch.reset()
	}
	w := &walker{
		s:         s,
		ctx:       ctx,
		tracked:   tracked,
		scanStart: time.Now().UnixNano(),
	}
	s.objects.beginFull()
	root, _, err := w.walkDir(ctx, "", prev, s.base, false)
	if berr := s.objects.endFull(); err == nil {
		err = berr
	}
	if err != nil {
		return "", fmt.Errorf("track %s: %w", s.root, err)
	}
	s.state, s.tracked = root, tracked
	s.gitlinks = map[string]bool{}
	collectGitlinks(root, "", s.gitlinks)
	if w.dirty.Load() || s.cacheDirty || !fileExists(s.cachePath()) {
		if err := s.saveCache(); err != nil {
			return "", err
		}
	}
	return Tree(root.tree.String()), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// seedAllowed reports whether index hashes may stand for file contents:
// not when core.autocrlf converts, nor when any attributes file sets a
// content filter (text, eol, filter, crlf, ident, working-tree-encoding).
func (s *Store) seedAllowed(ts *trackedSet) bool {
	if s.repo == nil || len(ts.files) == 0 {
		return false
	}
	if s.cfg.Autocrlf == "true" || s.cfg.Autocrlf == "input" {
		return false
	}
	if attributesFilter(filepath.Join(s.repo.CommonDir, "info", "attributes")) ||
		(s.cfg.AttributesFile != "" && attributesFilter(s.cfg.AttributesFile)) {
		return false
	}
	for p := range ts.files {
		if p == ".gitattributes" || strings.HasSuffix(p, "/.gitattributes") {
			if attributesFilter(filepath.Join(s.root, p)) {
				return false
			}
		}
	}
	// Attributes files above a work tree that is a subdirectory.
	for dir := s.repo.Root; dir != s.root && strings.HasPrefix(s.root, dir); {
		if attributesFilter(filepath.Join(dir, ".gitattributes")) {
			return false
		}
		rest := strings.TrimPrefix(strings.TrimPrefix(s.root, dir), string(filepath.Separator))
		first, _, _ := strings.Cut(rest, string(filepath.Separator))
		dir = filepath.Join(dir, first)
	}
	return true
}

// collectGitlinks adds the paths of the gitlinks below d (at rel) to out.
func collectGitlinks(d *dirNode, rel string, out map[string]bool) {
	for i := range d.entries {
		e := &d.entries[i]
		switch e.mode {
		case modeGitlink:
			out[joinRel(rel, e.name)] = true
		case modeDir:
			collectGitlinks(e.dir, joinRel(rel, e.name), out)
		}
	}
}
