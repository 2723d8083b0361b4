package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/seed43ef5acb/runner/tools/gitignore"
)

// walkEntry is one entry found by walkTree.
type walkEntry struct {
	Rel   string      // work-tree-relative slash path
	Name  string      // its last element
	Depth int         // 1 for a direct child of the start directory
	Dir   bool        // a directory (symlinks are never directories here)
	Type  fs.FileMode // type bits: 0 regular, fs.ModeDir, fs.ModeSymlink, …
	// Result is what walkSpec.work returned for this file (nil without work).
	Result any
}

// walkSpec configures a walk beyond its root and start directory.
type walkSpec struct {
	// keep, when set, decides in a worker whether a file (not a directory)
	// is passed on; nil keeps all.
	keep func(e *walkEntry) bool
	// work, when set, runs in a worker for each kept file with the open
	// directory holding it (an fd to use with openat); fn sees its result
	// in walkEntry.Result.
	work func(dirfd int, e *walkEntry) any
	// workers is how many goroutines list directories and run work, the
	// caller's included; 0 means GOMAXPROCS.
	workers int
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
	return walkTreeSpec(ctx, root, start, walkSpec{}, fn)
}

// walkTreeSpec is walkTree with worker-side filtering and work. Directories
// are listed and work runs in parallel, ahead of fn, roughly in walk order
// (a LIFO task stack); fn still sees every entry in walk order, in the
// calling goroutine, and ending the walk stops the workers.
func walkTreeSpec(ctx context.Context, root, start string, spec walkSpec, fn func(walkEntry) error) error {
	w := &walker{root: root, filter: pathFilter(ctx), spec: spec, ctx: ctx, fn: fn}
	st := w.initialRules(start)
	fd, err := openStart(root, start)
	if err != nil {
		return fmt.Errorf("read directory %s: %w", start, err)
	}
	w.q.cond = sync.NewCond(&w.q.mu)
	n := spec.workers
	if v, ok := ctx.Value(walkWorkersKey{}).(int); ok && n <= 0 {
		n = v
	}
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	for range n - 1 {
		wg.Add(1)
		go func() { defer wg.Done(); w.q.work() }()
	}
	top := &walkDir{done: make(chan struct{})}
	w.q.push(func() { w.list(top, newDirHandle(fd), nil, start, 0, st) })
	err = w.consume(top)
	w.q.stop()
	for t, ok := w.q.tryPop(); ok; t, ok = w.q.tryPop() {
		t() // releases what it holds, does no work
	}
	wg.Wait()
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

// walkWorkersKey carries a worker count for walks (tests and benchmarks).
type walkWorkersKey struct{}

// withWalkWorkers makes the walks of calls under ctx use n workers.
func withWalkWorkers(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, walkWorkersKey{}, n)
}

type walker struct {
	root   string
	prefix string // the work tree inside its repository: "" or "dir/"
	filter PathFilter
	spec   walkSpec
	ctx    context.Context
	fn     func(walkEntry) error
	q      taskQueue
}

// walkDir is a directory being listed; items is valid once done is closed.
type walkDir struct {
	done  chan struct{}
	items []walkItem
	err   error
}

// walkItem is an entry with, for a directory, its listing and, for a file
// with work, the work's result.
type walkItem struct {
	walkEntry
	sub  *walkDir
	res  chan struct{} // closed when Result is set
	resV any
}

// consume passes the entries of d and below to fn in walk order, helping
// with queued tasks while what it needs next is not ready.
func (w *walker) consume(d *walkDir) error {
	w.wait(d.done)
	if d.err != nil {
		return d.err
	}
	for i := range d.items {
		it := &d.items[i]
		if it.res != nil {
			w.wait(it.res)
			it.Result = it.resV
		}
		err := w.fn(it.walkEntry)
		switch {
		case errors.Is(err, fs.SkipDir):
			continue
		case err != nil:
			return err
		}
		if it.sub != nil {
			if err := w.ctx.Err(); err != nil {
				return fmt.Errorf("walk: %w", context.Cause(w.ctx))
			}
			if err := w.consume(it.sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// wait runs queued tasks until ch is closed. When the queue is empty the
// task that closes ch is running in another worker.
func (w *walker) wait(ch chan struct{}) {
	for {
		select {
		case <-ch:
			return
		default:
		}
		t, ok := w.q.tryPop()
		if !ok {
			<-ch
			return
		}
		t()
	}
}

// list reads the directory rel, opened as h (or, when h is nil, by name in
// parent), and queues its subdirectories and files' work.
func (w *walker) list(d *walkDir, h, parent *dirHandle, rel string, depth int, st *gitignore.Stack) {
	defer close(d.done)
	if w.q.stopped() {
		if h != nil {
			h.release()
		} else {
			parent.release()
		}
		return
	}
	if h == nil {
		fd, err := openIn(parent.fd, rel[strings.LastIndexByte(rel, '/')+1:], true)
		parent.release()
		if err != nil {
			return // vanished or unreadable subdirectory: skip it
		}
		h = newDirHandle(fd)
	}
	defer h.release()
	ents, err := readDirents(h.fd)
	if err != nil {
		if depth == 0 {
			d.err = fmt.Errorf("read directory %s: %w", rel, err)
		}
		return
	}
	st = st.Push(w.readIgnore(h.fd, rel, ents))
	var tasks []func()
	for _, de := range ents {
		if de.name == ".git" {
			continue
		}
		child := de.name
		if rel != "." {
			child = rel + "/" + de.name
		}
		isDir := de.typ == fs.ModeDir
		if st.Excluded(w.prefix+child, isDir) || !w.filter(child) {
			continue
		}
		it := walkItem{walkEntry: walkEntry{Rel: child, Name: de.name, Depth: depth + 1, Dir: isDir, Type: de.typ}}
		switch {
		case isDir:
			sub := &walkDir{done: make(chan struct{})}
			it.sub = sub
			h.acquire()
			tasks = append(tasks, func() { w.list(sub, nil, h, child, depth+1, st) })
		case w.spec.keep != nil && !w.spec.keep(&it.walkEntry):
			continue
		case w.spec.work != nil:
			it.res = make(chan struct{})
		}
		d.items = append(d.items, it)
	}
	for i := range d.items {
		it := &d.items[i]
		if it.res != nil {
			h.acquire()
			tasks = append(tasks, func() {
				defer h.release()
				defer close(it.res)
				if !w.q.stopped() {
					it.resV = w.spec.work(h.fd, &it.walkEntry)
				}
			})
		}
	}
	w.q.push(tasks...)
}

// readIgnore parses the .gitignore among ents, if it is a regular file.
func (w *walker) readIgnore(dirfd int, rel string, ents []dirent) []gitignore.Pattern {
	for _, de := range ents {
		if de.name != ".gitignore" || de.typ != 0 {
			continue
		}
		fd, err := openIn(dirfd, ".gitignore", false)
		if err != nil {
			return nil
		}
		b, err := readSmall(fd, 16<<20)
		closeFd(fd)
		if err != nil {
			return nil
		}
		base := w.prefix
		if rel != "." {
			base += rel + "/"
		}
		return gitignore.ParseFile(b, base)
	}
	return nil
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
		dir := filepath.Join(w.root, filepath.FromSlash(strings.Join(parts[:i], "/")))
		if b, err := gitignore.ReadRegular(filepath.Join(dir, ".gitignore")); err == nil {
			base := w.prefix
			if i > 0 {
				base += strings.Join(parts[:i], "/") + "/"
			}
			st = st.Push(gitignore.ParseFile(b, base))
		}
	}
	return st
}

// taskQueue is a LIFO stack of tasks shared by the workers: pushing a
// directory's children in reverse keeps the work close to walk order.
// After stop, tasks still run (to release what they hold) but do no work.
type taskQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	tasks    []func()
	stopping atomic.Bool
}

// push adds tasks so that the first one runs first.
func (q *taskQueue) push(tasks ...func()) {
	if len(tasks) == 0 {
		return
	}
	q.mu.Lock()
	for i := len(tasks) - 1; i >= 0; i-- {
		q.tasks = append(q.tasks, tasks[i])
	}
	q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *taskQueue) tryPop() (func(), bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.popLocked()
}

func (q *taskQueue) popLocked() (func(), bool) {
	n := len(q.tasks)
	if n == 0 {
		return nil, false
	}
	t := q.tasks[n-1]
	q.tasks[n-1] = nil
	q.tasks = q.tasks[:n-1]
	return t, true
}

// work runs tasks until the queue is empty after stop.
func (q *taskQueue) work() {
	q.mu.Lock()
	for {
		t, ok := q.popLocked()
		if !ok {
			if q.stopping.Load() {
				break
			}
			q.cond.Wait()
			continue
		}
		q.mu.Unlock()
		t()
		q.mu.Lock()
	}
	q.mu.Unlock()
}

func (q *taskQueue) stopped() bool { return q.stopping.Load() }

// stop makes the remaining tasks no-ops and lets the workers end once the
// queue is empty.
func (q *taskQueue) stop() {
	q.mu.Lock()
	q.stopping.Store(true)
	q.mu.Unlock()
	q.cond.Broadcast()
}
