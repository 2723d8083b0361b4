package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/seed43ef5acb/runner/internal/gitignore"
	"github.com/seed43ef5acb/runner/internal/treewalk"
)

// racyWindow is how close to a scan's start a file's mtime or ctime may
// be before its cached hash is distrusted on the next scan. It covers
// coarse kernel clocks and 1-2 s filesystem timestamp granularity.
const racyWindow int64 = 2e9

// walker performs one stat walk of the work tree (or of a directory in
// it) on the walk the search tools share (package treewalk): treewalk
// lists the directories and applies git's ignore rules; the walker keeps
// what the index tracks inside ignored directories, records nested
// repositories as gitlinks, stats and hashes files in treewalk's workers
// and builds the trees bottom-up in its Post hook.
type walker struct {
	s         *Store
	ctx       context.Context // ends the hashing of a large file between blocks
	tracked   *trackedSet
	scanStart int64       // ns
	dirty     atomic.Bool // the result differs from the previous state

	errMu sync.Mutex
	err   error // the first error of a hook
}

// dirState is a treewalk.Dir's Data: the directory's previous state and,
// after Post, its node (nil on error) or that it is a nested repository.
type dirState struct {
	prev *dirNode
	node *dirNode
	repo bool
}

// fileResult is a file entry's Work result.
type fileResult struct {
	e    entry
	keep bool
	err  error
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
	start := rel
	if start == "" {
		start = "."
	}
	if w.s.watch != nil {
		w.s.watch.add(filepath.Join(w.s.root, rel), rel) // before reading: nothing written later is missed
	}
	top, err := treewalk.Tree(ctx, treewalk.Options{
		Root: w.s.root, Start: start, Prefix: w.s.prefix, Rules: stack,
		StartIgnored: trackedOnly, StartData: &dirState{prev: prev},
		Workers: 2 * runtime.GOMAXPROCS(0), StopAtRepos: true,
		Visit: w.visitEntry, Work: w.work, Post: w.post,
	})
	if err != nil {
		return nil, false, err
	}
	w.errMu.Lock()
	err = w.err
	w.errMu.Unlock()
	if err != nil {
		return nil, false, err
	}
	st := top.Data.(*dirState)
	if st.repo {
		return nil, true, nil
	}
	return st.node, false, nil
}

func (w *walker) fail(err error) {
	w.errMu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.errMu.Unlock()
}

// visitEntry is the treewalk Visit hook: classify with the directory's
// previous state; a directory kept is watched before it is listed.
func (w *walker) visitEntry(d *treewalk.Dir, e *treewalk.Entry) treewalk.Action {
	act := w.classify(d.Data.(*dirState).prev, e)
	if act == treewalk.Descend && w.s.watch != nil {
		w.s.watch.add(filepath.Join(w.s.root, e.Rel), e.Rel)
	}
	return act
}

// classify decides what one entry of a directory (prev is its previous
// state) becomes: Skip, Keep (a file or symlink to stat, or a gitlink the
// index records, its entry in e.Data) or Descend (a directory to walk,
// e.Data its *dirState). e.Ignored says git's rules ignore it, or that it
// lies in an ignored directory; ignored paths are kept only when the
// index tracks them (or, for directories, files below them).
func (w *walker) classify(prev *dirNode, e *treewalk.Entry) treewalk.Action {
	if w.s.exclude[e.Rel] {
		return treewalk.Skip
	}
	tf, isTracked := w.tracked.files[e.Rel]
	switch e.Type {
	case fs.ModeDir:
		if isTracked && tf.mode == modeGitlink {
			h, ok := w.s.gitlinkHead(e.Rel, tf.hash)
			if !ok {
				return treewalk.Skip
			}
			e.Data = &entry{name: e.Name, mode: modeGitlink, hash: h}
			return treewalk.Keep
		}
		if e.Ignored && !w.tracked.dirs[e.Rel] {
			return treewalk.Skip
		}
		st := &dirState{}
		if i := prev.find(e.Name); i >= 0 {
			st.prev = prev.entries[i].dir
		}
		e.Data = st
		return treewalk.Descend
	case fs.ModeSymlink, 0:
		if !isTracked && e.Ignored {
			return treewalk.Skip
		}
		return treewalk.Keep
	}
	return treewalk.Skip // sockets, FIFOs, devices
}

// work is the treewalk Work hook: stat (and hash) a kept file or symlink.
func (w *walker) work(dirfd int, d *treewalk.Dir, e *treewalk.Entry) any {
	if e.Data != nil {
		return nil // a gitlink: decided by classify
	}
	fe, keep, err := w.fileEntry(dirfd, filepath.Join(w.s.root, e.Rel), e.Name, d.Data.(*dirState).prev)
	return fileResult{e: fe, keep: keep, err: err}
}

// post is the treewalk Post hook: build a directory's node from its
// entries' results once everything below it is done.
func (w *walker) post(d *treewalk.Dir) {
	// The node is all the parent's Post reads: the listing, its results
	// and its work closures can go now, not when the whole walk ends.
	defer func() { d.Entries = nil }()
	st := d.Data.(*dirState)
	switch {
	case d.Err != nil:
		if !vanished(d.Err) {
			w.fail(fmt.Errorf("read directory %s: %w", d.Rel, d.Err))
			return
		}
		st.node = &dirNode{}
		return
	case d.Repo:
		st.repo = true
		return
	}
	entries := make([]entry, 0, len(d.Entries))
	for i := range d.Entries {
		e := &d.Entries[i]
		switch {
		case e.Dir != nil:
			cs := e.Dir.Data.(*dirState)
			if cs.repo {
				if h, ok := w.s.gitlinkHead(e.Rel, plumbing.ZeroHash); ok && !e.Ignored {
					entries = append(entries, entry{name: e.Name, mode: modeGitlink, hash: h})
				}
				continue
			}
			if cs.node == nil {
				return // an error below, recorded
			}
			entries = append(entries, entry{name: e.Name, mode: modeDir, dir: cs.node})
		case e.Data != nil:
			entries = append(entries, *e.Data.(*entry))
		default:
			r := e.Result.(fileResult)
			if r.err != nil {
				w.fail(r.err)
				return
			}
			if r.keep {
				entries = append(entries, r.e)
			}
		}
	}
	node, err := w.finishDir(entries, st.prev)
	if err != nil {
		w.fail(err)
		return
	}
	st.node = node
}

// vanished reports a directory that is gone, not a directory (any more),
// a symlink now, or unreadable: git skips such a directory.
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) || !isOpenErr(err)
}

// isOpenErr: err comes from opening the directory; a failed listing of
// an opened directory is skipped as os.ReadDir's empty result was.
func isOpenErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "open"
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
	return w.s.hashEntry(w.ctx, dirfd, abs, e)
}

// finishDir drops empty directories, sorts the entries and computes the
// tree, reusing prev's when nothing changed.
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
