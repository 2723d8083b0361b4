package sandbox

import (
	"path/filepath"
	"slices"
	"sync"
)

// Watch is a watch for protected files started before the sandbox
// (WatchProtected), so that the work tree is walked once, not twice:
// New takes it over through Policy.Watch when it watches the same tree.
type Watch struct {
	mu    sync.Mutex
	root  string
	w     *coverWatch // nil once New took it over or Close closed it
	found []string
}

// WatchProtected walks root (absolute), watching each directory, and
// returns the watch and the files protected reports now (absolute, in
// walk order). Off Linux it fails: the caller walks the tree itself.
func WatchProtected(root string, protected func(path string) bool) (*Watch, []string, error) {
	root = filepath.Clean(root)
	w, found, err := newCoverWatch(root, protected)
	if err != nil {
		return nil, nil, err
	}
	return &Watch{root: root, w: w, found: slices.Clone(found)}, found, nil
}

// Close stops the watch unless New took it over. A nil Watch is fine.
func (w *Watch) Close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.w != nil {
		w.w.close()
		w.w = nil
	}
}

// take hands the watch over when it watches root: the files found when it
// started and those that appeared since (or, when it could not be
// trusted, those of a new walk). ok is false when it watches another
// tree or was taken or closed; the caller then walks.
func (w *Watch) take(root string) (cw *coverWatch, found []string, ok bool) {
	if w == nil {
		return nil, nil, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.w == nil || w.root != filepath.Clean(root) {
		return nil, nil, false
	}
	cw, w.w = w.w, nil
	more, walked := cw.take()
	if walked != "" {
		return cw, more, true
	}
	found = slices.Clone(w.found)
	for _, p := range more {
		if !slices.Contains(found, p) {
			found = append(found, p)
		}
	}
	return cw, found, true
}

// startWatch is the watch New keeps: p.Watch's when it watches root,
// else a new one (walking root). p.Watch is closed either way.
func startWatch(p Policy, root string) (*coverWatch, []string, error) {
	if cw, found, ok := p.Watch.take(root); ok {
		return cw, found, nil
	}
	p.Watch.Close()
	return newCoverWatch(root, p.Protected)
}
