package snapshot

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/seed43ef5acb/runner/tools/gitignore"
)

// racyWindow is how close to a scan's start a file's mtime or ctime may
// be before its cached hash is distrusted on the next scan. It covers
// coarse kernel clocks and 1-2 s filesystem timestamp granularity.
const racyWindow int64 = 2e9

// walker performs one full stat walk of the work tree.
type walker struct {
	s         *Store
	tracked   *trackedSet
	scanStart int64 // ns
	sem       chan struct{}
	dirty     atomic.Bool // the result differs from the previous state
}

// walkJob is a subdirectory still to walk.
type walkJob struct {
	idx         int
	rel         string
	prev        *dirNode
	trackedOnly bool
}

// walkDir walks the directory rel ("" for the work tree) and returns its
// node with the tree hash computed. prev is the same directory in the
// previous state (nil if none); stack holds the ignore rules of its
// parents. In trackedOnly mode (inside an ignored directory) only paths
// tracked in the user's index are kept. isRepo reports a nested
// repository, which the caller records as a gitlink.
func (w *walker) walkDir(ctx context.Context, rel string, prev *dirNode, stack *gitignore.Stack, trackedOnly bool) (node *dirNode, isRepo bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	abs := filepath.Join(w.s.root, rel)
	if w.s.watch != nil {
		w.s.watch.add(abs, rel) // before reading: nothing written later is missed
	}
	dir, des, err := readDir(abs)
	if err != nil || des == nil {
		return &dirNode{}, false, err
	}
	if rel != "" {
		for _, de := range des {
			if de.Name() == ".git" {
				dir.Close()
				return nil, true, nil
			}
		}
	}
	if !trackedOnly {
		stack = stack.Push(w.s.readIgnore(rel, des))
	}
	entries, jobs, err := w.visitAll(int(dir.Fd()), rel, des, prev, stack, trackedOnly)
	dir.Close()
	if err != nil {
		return nil, false, err
	}
	if err := w.runJobs(ctx, entries, jobs, stack); err != nil {
		return nil, false, err
	}
	node, err = w.finishDir(entries, prev)
	return node, false, err
}

// visitAll visits the entries of one directory, open as dirfd.
func (w *walker) visitAll(dirfd int, rel string, des []fs.DirEntry, prev *dirNode, stack *gitignore.Stack, trackedOnly bool) ([]entry, []walkJob, error) {
	entries := make([]entry, 0, len(des))
	var jobs []walkJob
	for _, de := range des {
		e, job, keep, err := w.visit(dirfd, rel, de, prev, stack, trackedOnly)
		if err != nil {
			return nil, nil, err
		}
		if !keep {
			continue
		}
		if job != nil {
			job.idx = len(entries)
			jobs = append(jobs, *job)
		}
		entries = append(entries, e)
	}
	return entries, jobs, nil
}

// readDir opens and lists a directory; the caller closes it. A directory
// that vanished or cannot be read gives nil entries, as git skips it.
func readDir(abs string) (*os.File, []fs.DirEntry, error) {
	f, err := os.Open(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	des, err := f.ReadDir(-1)
	if err != nil && len(des) == 0 {
		f.Close()
		return nil, nil, nil
	}
	return f, des, nil
}

// visit decides what one directory entry becomes. keep is false for
// skipped entries; job is set for a subdirectory to walk.
func (w *walker) visit(dirfd int, rel string, de fs.DirEntry, prev *dirNode, stack *gitignore.Stack, trackedOnly bool) (e entry, job *walkJob, keep bool, err error) {
	name := de.Name()
	if name == ".git" {
		return e, nil, false, nil
	}
	path := joinRel(rel, name)
	if w.s.exclude[path] {
		return e, nil, false, nil
	}
	tf, isTracked := w.tracked.files[path]
	typ := de.Type()
	switch {
	case typ.IsDir():
		if isTracked && tf.mode == modeGitlink {
			h, ok := w.s.gitlinkHead(path, tf.hash)
			return entry{name: name, mode: modeGitlink, hash: h}, nil, ok, nil
		}
		excl := trackedOnly || stack.Excluded(w.s.prefix+path, true)
		if excl && !w.tracked.dirs[path] {
			return e, nil, false, nil
		}
		var pd *dirNode
		if i := prev.find(name); i >= 0 {
			pd = prev.entries[i].dir
		}
		return entry{name: name, mode: modeDir}, &walkJob{rel: path, prev: pd, trackedOnly: excl}, true, nil
	case typ&fs.ModeSymlink != 0 || typ.IsRegular():
		if !isTracked && (trackedOnly || stack.Excluded(w.s.prefix+path, false)) {
			return e, nil, false, nil
		}
		e, keep, err = w.fileEntry(dirfd, filepath.Join(w.s.root, path), name, prev)
		return e, nil, keep, err
	}
	return e, nil, false, nil // sockets, FIFOs, devices
}

// fileEntry stats a file or symlink and reuses the previous hash when the
// stat is unchanged, else hashes and stores its content.
func (w *walker) fileEntry(dirfd int, abs, name string, prev *dirNode) (entry, bool, error) {
	e, ok, err := w.s.statEntry(dirfd, abs, name, w.scanStart)
	if err != nil || !ok {
		return e, ok, err
	}
	if i := prev.find(name); i >= 0 {
		p := &prev.entries[i]
		if p.mode == e.mode && p.st.sameStat(e.st) {
			e.hash = p.hash
			return e, true, nil
		}
	}
	w.dirty.Store(true)
	return w.s.hashEntry(abs, e)
}

func (w *walker) runJobs(ctx context.Context, entries []entry, jobs []walkJob, stack *gitignore.Stack) error {
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	repos := make([]bool, len(jobs))
	for i, j := range jobs {
		run := func() {
			node, isRepo, err := w.walkDir(ctx, j.rel, j.prev, stack, j.trackedOnly)
			entries[j.idx].dir, repos[i], errs[i] = node, isRepo, err
		}
		select {
		case w.sem <- struct{}{}:
			wg.Add(1)
			go func() {
				defer func() { <-w.sem; wg.Done() }()
				run()
			}()
		default:
			run()
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, j := range jobs {
		e := &entries[j.idx]
		if repos[i] {
			h, ok := w.s.gitlinkHead(j.rel, plumbing.ZeroHash)
			if !ok || j.trackedOnly {
				e.mode = 0 // dropped below
				continue
			}
			*e = entry{name: e.name, mode: modeGitlink, hash: h}
		}
	}
	return nil
}

// finishDir drops empty directories and skipped repositories, sorts the
// entries and computes the tree, reusing prev's when nothing changed.
func (w *walker) finishDir(entries []entry, prev *dirNode) (*dirNode, error) {
	out := entries[:0]
	for _, e := range entries {
		if e.mode == 0 || (e.mode == modeDir && len(e.dir.entries) == 0) {
			continue
		}
		if e.mode == modeDir {
			e.hash = e.dir.tree
		}
		out = append(out, e)
	}
	sortEntries(out)
	node := &dirNode{entries: out}
	if prev != nil && prev.valid && sameEntries(prev.entries, out) {
		node.tree, node.valid = prev.tree, true
		return node, nil
	}
	w.dirty.Store(true)
	return node, w.s.storeTree(node)
}

func sameEntries(a, b []entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].mode != b[i].mode || a[i].hash != b[i].hash {
			return false
		}
	}
	return true
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
