package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/seed43ef5acb/runner/runner/snapshot"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// snapshotWatch makes the run's store watch the work tree (inotify), so a
// step after a command re-stats only what changed. Benchmarks turn it off
// to measure the full walk per step it replaces.
var snapshotWatch = true

// baseSnapshot opens the snapshot store (beside the --isolate copy, else
// in the user cache) and starts recording the base tree in its own
// goroutine: the first model request need not wait for a walk of a large
// tree. waitBase waits for it; the first tool that may change the tree,
// run.started and the history's header do (overlap.go). The out dir, the
// log, the patch and the cassette are excluded when they lie in the work
// tree.
func (r *execRun) baseSnapshot(ctx context.Context) error {
	opts := snapshot.Options{WorkTree: r.workTree, Exclude: r.excludes(), Env: r.getenv, Watch: snapshotWatch,
		MaxBinaryPatch: r.binaryPatchLimit()}
	switch {
	case r.opts.SnapshotDir != "":
		opts.StoreDir = r.opts.SnapshotDir
	case r.isolated:
		opts.StoreDir = filepath.Join(r.runTemp.Path(), "snapshots")
	}
	if !r.opts.Quiet {
		opts.OnWait = func(holder string) {
			if holder != "" {
				holder = " (" + holder + ")"
			}
			fmt.Fprintf(r.opts.Stderr, "runner: waiting for another run on %s to end%s: one run at a time per work tree; "+
				"use --isolate to run beside it\n", r.workTree, holder)
		}
	}
	store, err := snapshot.Open(ctx, opts)
	if err != nil {
		return fmt.Errorf("%w: snapshot: %w", ErrInfra, err)
	}
	r.store = store
	// Before the base snapshot and any command (MCP servers start after
	// it), and after any wait for another run on this tree (whose writes
	// are not this run's): an ignored file changed from here on is one of
	// the run's.
	r.since = snapshot.FileClock()
	done := make(chan struct{})
	r.baseDone, r.baseOnce = done, &sync.Once{}
	go func() {
		defer close(done)
		if r.opts.baseHook != nil {
			r.opts.baseHook()
		}
		r.baseTree, r.baseErr = store.Track(ctx)
	}()
	if r.opts.serialBase {
		return r.waitBase()
	}
	return nil
}

// waitBase waits until the base snapshot is recorded and returns its
// error. Safe to call from several goroutines, and before the snapshot
// stage ran (then there is nothing to wait for).
func (r *execRun) waitBase() error {
	if r.baseDone == nil {
		return nil
	}
	<-r.baseDone
	r.baseOnce.Do(func() { r.base = r.baseTree })
	if r.baseErr != nil {
		return fmt.Errorf("%w: base snapshot: %w", ErrInfra, r.baseErr)
	}
	return nil
}

// baseReady reports whether the base snapshot is recorded (or failed).
func (r *execRun) baseReady() bool {
	if r.baseDone == nil {
		return true
	}
	select {
	case <-r.baseDone:
		return true
	default:
		return false
	}
}

// excludes lists the run's own files that lie inside the work tree, as
// work-tree-relative slash paths: the runner's state directories (the
// work tree's .runner and the one below the current directory, where the
// default out dirs are) whether they exist or not, so that no patch holds
// a .runner path, and the out dir, log, patch, cassette and continued run.
func (r *execRun) excludes() []string {
	out := []string{permission.RunnerDir}
	if c := r.continued; c != nil {
		out = append(out, c.history.Header.Excludes...) // the earlier runs' out dirs
	}
	for _, p := range []string{permission.RunnerDir, r.outDir, r.eventsPath, r.patchPath, r.opts.Record, r.opts.Continue} {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			abs = filepath.Join(real, filepath.Base(abs))
		}
		rel, err := filepath.Rel(r.workTree, abs)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(os.PathSeparator)) {
			continue
		}
		if rel = filepath.ToSlash(rel); !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out
}
