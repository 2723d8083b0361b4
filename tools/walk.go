package tools

import (
	"context"
	"io/fs"
	"os"

	"github.com/seed43ef5acb/runner/internal/treewalk"
)

// walkEntry is one entry found by walkTree (package treewalk's Entry).
type walkEntry = treewalk.Entry

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
// start, in lexical order, depth first, on the walk snapshots use
// (package treewalk). It never follows symlinks, skips every .git, skips
// what git ignores (package gitignore: the global excludes file,
// info/exclude, the .gitignore files of the root, of the start
// directory's ancestors and nested ones), and skips entries the context's
// PathFilter refuses. A start directory that is itself ignored is walked
// anyway (it was asked for), applying only the .gitignore files inside
// it. fn may return fs.SkipDir for a directory, or errStopWalk to end the
// walk.
func walkTree(ctx context.Context, root, start string, fn func(*walkEntry) error) error {
	return walkTreeSpec(ctx, root, start, walkSpec{}, fn)
}

// walkTreeSpec is walkTree with worker-side filtering and work. Directories
// are listed and work runs in parallel, ahead of fn, roughly in walk order;
// fn still sees every entry in walk order, in the calling goroutine, and
// ending the walk stops the workers.
func walkTreeSpec(ctx context.Context, root, start string, spec walkSpec, fn func(*walkEntry) error) error {
	rules, prefix := treewalk.StartRules(root, start, os.Getenv)
	filter := pathFilter(ctx)
	opt := treewalk.Options{
		Root: root, Start: start, Prefix: prefix, Rules: rules, Workers: spec.workers,
		Visit: func(_ *treewalk.Dir, e *treewalk.Entry) treewalk.Action {
			if e.Ignored || !filter(e.Rel, e.Type == fs.ModeSymlink) || !e.IsDir() && spec.keep != nil && !spec.keep(e) {
				return treewalk.Skip
			}
			return treewalk.Descend
		},
	}
	if v, ok := ctx.Value(walkWorkersKey{}).(int); ok && opt.Workers <= 0 {
		opt.Workers = v
	}
	if spec.work != nil {
		opt.Work = func(dirfd int, _ *treewalk.Dir, e *treewalk.Entry) any { return spec.work(dirfd, e) }
	}
	return treewalk.Walk(ctx, opt, fn)
}

// walkWorkersKey carries a worker count for walks (tests and benchmarks).
type walkWorkersKey struct{}

// withWalkWorkers makes the walks of calls under ctx use n workers.
func withWalkWorkers(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, walkWorkersKey{}, n)
}
