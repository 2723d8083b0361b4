package treewalk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/seed43ef5acb/runner/internal/gitignore"
)

// Entry is one directory entry found by a walk.
type Entry struct {
	Rel   string      // work-tree-relative slash path
	Name  string      // its last element
	Depth int         // 1 for a direct child of the start directory
	Type  fs.FileMode // type bits: 0 regular, fs.ModeDir, fs.ModeSymlink, fs.ModeIrregular
	// Ignored: git ignores it (by the rules in force where it lies), or it
	// lies in an ignored directory that Visit descended into anyway.
	Ignored bool
	// Data is the caller's: Visit may set it, and a directory it descended
	// into starts with it as its Dir.Data.
	Data any
	// Result is what Options.Work returned for it (nil without Work).
	Result any
	// Dir is the listing of a directory Visit descended into, else nil.
	Dir *Dir
}

// IsDir reports whether the entry is a directory (never a symlink).
func (e *Entry) IsDir() bool { return e.Type == fs.ModeDir }

// Dir is one directory of a walk.
type Dir struct {
	Rel   string // work-tree-relative slash path, "." for the root
	Depth int    // 0 for the start directory
	// Ignored: the directory is ignored (Visit descended anyway); its
	// .gitignore is not read and all its entries are Ignored, as in git.
	Ignored bool
	// Repo: Options.StopAtRepos and the directory (not the root) holds a
	// .git, so it is a nested repository and its entries were not visited.
	Repo bool
	// Err: it could not be opened or listed (Entries is then empty).
	Err error
	// Data is the caller's (its entry's Data, or Options.StartData).
	Data any
	// Entries are the kept entries, sorted by name; each directory's Dir is
	// set once its listing is done (after Walk passed it, in Tree always).
	Entries []Entry

	rules    *gitignore.Stack // the rules in force for its entries
	listed   chan struct{}    // closed once Entries is set
	workLeft atomic.Int32     // Work tasks still running, for Walk
	workDone chan struct{}    // closed when workLeft drops to 0 (nil without work)
	pending  atomic.Int32     // Tree: listing, work and subdirectories not done
	parent   *Dir
}

// Action is what Options.Visit decides for an entry.
type Action int8

// The actions: Skip leaves an entry out, Keep passes it on (a directory
// without listing it), Descend passes it on and lists a directory.
const (
	Skip    Action = iota // left out
	Keep                  // kept; a directory is not listed
	Descend               // kept; a directory is listed too
)

// Options configures a walk. The hooks run in the workers, concurrently
// for different directories: they must be safe for concurrent use.
type Options struct {
	Root   string // absolute path of the work tree
	Start  string // work-tree-relative slash path of the directory walked, "." for the root
	Prefix string // the work tree's place in its repository, "" or "dir/" (gitignore.Repo.Prefix)
	// Rules are the ignore rules in force in Start (StartRules); the
	// .gitignore files of Start and below are added on the way.
	Rules *gitignore.Stack
	// StartIgnored walks Start as an ignored directory (see Dir.Ignored).
	StartIgnored bool
	StartData    any // the start Dir's Data
	Workers      int // goroutines, the caller's included; 0 means GOMAXPROCS
	// StopAtRepos treats a directory below the root that holds a .git as a
	// nested repository (Dir.Repo) whose entries are not visited.
	StopAtRepos bool
	// Visit decides each entry but .git, after the rules set Ignored; nil
	// means Default.
	Visit func(d *Dir, e *Entry) Action
	// Work, when set, runs for each kept entry that is not a directory, with
	// the directory holding it open as dirfd (for openat or fstatat); its
	// result lands in Entry.Result.
	Work func(dirfd int, d *Dir, e *Entry) any
	// Post (Tree only) runs once for each directory after its Work and the
	// Post of each directory below it are done: bottom-up.
	Post func(d *Dir)
}

// Default is the Visit that keeps what git does not ignore.
func Default(_ *Dir, e *Entry) Action {
	if e.Ignored {
		return Skip
	}
	return Descend
}

// Walk passes the kept entries below opt.Start to fn in walk order
// (lexical by name, depth first) in the calling goroutine, while workers
// list directories and run Work ahead of it, roughly in walk order. fn may
// return fs.SkipDir for a directory, or fs.SkipAll to end the walk early
// (Walk then returns nil); any other error ends the walk and is returned.
// An unreadable start directory is an error; an unreadable directory
// below it is left out. A cancelled ctx ends the walk with its cause.
func Walk(ctx context.Context, opt Options, fn func(*Entry) error) error {
	fd, err := openStart(opt.Root, opt.Start)
	if err != nil {
		return fmt.Errorf("read directory %s: %w", opt.Start, err)
	}
	w := newWalker(ctx, opt, false)
	top := w.startDir()
	stop := w.run(func() { w.list(top, newDirHandle(fd), nil) })
	err = w.consume(top, fn)
	stop()
	if top.Err != nil && err == nil {
		err = top.Err
	}
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("walk: %w", context.Cause(ctx))
	}
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

// Tree lists the whole tree below opt.Start, runs Work and then Post on
// every directory bottom-up, and returns the start directory. Directories
// that cannot be read have Err set (the start one too); the returned error
// is only ctx's cause when it was cancelled.
func Tree(ctx context.Context, opt Options) (*Dir, error) {
	w := newWalker(ctx, opt, true)
	top := w.startDir()
	done := make(chan struct{})
	w.rootDone = done
	fd, err := openStart(opt.Root, opt.Start)
	if err != nil {
		top.Err = err
		close(top.listed)
		w.finish(top)
		return top, nil
	}
	stop := w.run(func() { w.list(top, newDirHandle(fd), nil) })
	w.wait(done)
	stop()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("walk: %w", context.Cause(ctx))
	}
	return top, nil
}

type walker struct {
	ctx      context.Context
	opt      Options
	tree     bool
	q        taskQueue
	rootDone chan struct{}
}

func newWalker(ctx context.Context, opt Options, tree bool) *walker {
	if opt.Visit == nil {
		opt.Visit = Default
	}
	w := &walker{ctx: ctx, opt: opt, tree: tree}
	w.q.cond = sync.NewCond(&w.q.mu)
	return w
}

func (w *walker) startDir() *Dir {
	d := &Dir{Rel: w.opt.Start, Ignored: w.opt.StartIgnored, Data: w.opt.StartData, rules: w.opt.Rules, listed: make(chan struct{})}
	d.pending.Store(1)
	return d
}

// run starts the workers with first queued; the returned stop ends them
// after making what is still queued release what it holds.
func (w *walker) run(first func()) (stop func()) {
	n := w.opt.Workers
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	for range n - 1 {
		wg.Add(1)
		go func() { defer wg.Done(); w.q.work() }()
	}
	w.q.push(first)
	return func() {
		w.q.stop()
		for t, ok := w.q.tryPop(); ok; t, ok = w.q.tryPop() {
			t() // releases what it holds, does no work
		}
		wg.Wait()
	}
}

// consume passes the entries of d and below to fn in walk order, helping
// with queued tasks while what it needs next is not ready.
func (w *walker) consume(d *Dir, fn func(*Entry) error) error {
	w.wait(d.listed)
	if d.workDone != nil {
		w.wait(d.workDone)
	}
	for i := range d.Entries {
		e := &d.Entries[i]
		err := fn(e)
		switch {
		case errors.Is(err, fs.SkipDir):
			continue
		case err != nil:
			return err
		}
		if e.Dir != nil {
			if err := w.ctx.Err(); err != nil {
				return fmt.Errorf("walk: %w", context.Cause(w.ctx))
			}
			if err := w.consume(e.Dir, fn); err != nil {
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

// list reads the directory d, open as h (or, when h is nil, by name in
// parent), visits its entries and queues its subdirectories and work.
func (w *walker) list(d *Dir, h, parent *dirHandle) {
	if w.q.stopped() || w.ctx.Err() != nil {
		w.q.stop()
		releaseEither(h, parent)
		w.listed(d, nil)
		return
	}
	if h == nil {
		fd, err := OpenIn(parent.fd, d.Rel[strings.LastIndexByte(d.Rel, '/')+1:], true)
		parent.release()
		if err != nil {
			d.Err = &fs.PathError{Op: "open", Path: d.Rel, Err: err}
			w.listed(d, nil)
			return
		}
		h = newDirHandle(fd)
	}
	defer h.release()
	ents, err := readDirents(h.fd)
	if err != nil {
		d.Err = fmt.Errorf("read directory %s: %w", d.Rel, err)
		w.listed(d, nil)
		return
	}
	if w.opt.StopAtRepos && d.Rel != "." && hasGit(ents) {
		d.Repo = true
		w.listed(d, nil)
		return
	}
	if !d.Ignored {
		d.rules = d.rules.Push(w.readIgnore(h.fd, d.Rel, ents))
	}
	w.listed(d, w.visitAll(d, h, ents))
}

func releaseEither(h, parent *dirHandle) {
	if h != nil {
		h.release()
	} else if parent != nil {
		parent.release()
	}
}

func hasGit(ents []dirent) bool {
	for _, de := range ents {
		if de.name == ".git" {
			return true
		}
	}
	return false
}

// visitAll decides the entries of d (open as h), sets d.Entries and
// returns the tasks for its subdirectories and work, in walk order.
func (w *walker) visitAll(d *Dir, h *dirHandle, ents []dirent) []func() {
	d.Entries = make([]Entry, 0, len(ents))
	for _, de := range ents {
		if de.name == ".git" {
			continue
		}
		child := de.name
		if d.Rel != "." {
			child = d.Rel + "/" + de.name
		}
		e := Entry{Rel: child, Name: de.name, Depth: d.Depth + 1, Type: de.typ}
		e.Ignored = d.Ignored || d.rules.Excluded(w.opt.Prefix+child, e.IsDir())
		act := w.opt.Visit(d, &e)
		if act == Skip {
			continue
		}
		if act == Descend && e.IsDir() {
			e.Dir = &Dir{Rel: child, Depth: d.Depth + 1, Ignored: e.Ignored, Data: e.Data, rules: d.rules, listed: make(chan struct{}), parent: d}
			e.Dir.pending.Store(1)
		}
		d.Entries = append(d.Entries, e)
	}
	var tasks []func()
	work := 0
	for i := range d.Entries {
		e := &d.Entries[i]
		switch {
		case e.Dir != nil:
			sub := e.Dir
			h.acquire()
			tasks = append(tasks, func() { w.list(sub, nil, h) })
		case w.opt.Work != nil && !e.IsDir():
			work++
			h.acquire()
			tasks = append(tasks, func() {
				defer h.release()
				if !w.q.stopped() {
					e.Result = w.opt.Work(h.fd, d, e)
				}
				w.workFinished(d)
			})
		}
	}
	if work > 0 && !w.tree {
		d.workLeft.Store(int32(work))
		d.workDone = make(chan struct{})
	}
	d.pending.Add(int32(len(tasks)))
	return tasks
}

// listed marks d listed and queues its tasks; the listing's own share of
// d.pending is then done.
func (w *walker) listed(d *Dir, tasks []func()) {
	close(d.listed)
	w.q.push(tasks...)
	if w.tree {
		w.finish(d)
	}
}

// workFinished records one Work task of d done.
func (w *walker) workFinished(d *Dir) {
	if w.tree {
		w.finish(d)
		return
	}
	if d.workLeft.Add(-1) == 0 {
		close(d.workDone)
	}
}

// finish drops one share of d.pending (Tree); the last runs Post and
// passes the completion up to the parent.
func (w *walker) finish(d *Dir) {
	for d != nil && d.pending.Add(-1) == 0 {
		if w.opt.Post != nil && !w.q.stopped() {
			w.opt.Post(d)
		}
		if d.parent == nil {
			close(w.rootDone)
			return
		}
		d = d.parent
	}
}

// readIgnore parses the .gitignore among ents, if it is a regular file.
func (w *walker) readIgnore(dirfd int, rel string, ents []dirent) []gitignore.Pattern {
	for _, de := range ents {
		if de.name != ".gitignore" || de.typ != 0 {
			continue
		}
		fd, err := OpenIn(dirfd, ".gitignore", false)
		if err != nil {
			return nil
		}
		b, err := readSmall(fd, gitignore.MaxFile)
		CloseFd(fd)
		if err != nil {
			return nil
		}
		base := w.opt.Prefix
		if rel != "." {
			base += rel + "/"
		}
		return gitignore.ParseFile(b, base)
	}
	return nil
}
