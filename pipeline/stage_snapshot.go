package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/snapshot"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// snapshotWatch makes the run's store watch the work tree (inotify), so a
// step after a command re-stats only what changed. Benchmarks turn it off
// to measure the full walk per step it replaces.
var snapshotWatch = true

// baseSnapshot opens the snapshot store (beside the --isolate copy, else
// in the user cache) and records the base tree. The out dir, the log, the
// patch and the cassette are excluded when they lie in the work tree.
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
	base, err := store.Track(ctx)
	if err != nil {
		return fmt.Errorf("%w: base snapshot: %w", ErrInfra, err)
	}
	r.base = base
	return nil
}

// excludes lists the run's own files that lie inside the work tree, as
// work-tree-relative slash paths: the runner's state directories (the
// work tree's .runner and the one below the current directory, where the
// default out dirs are) whether they exist or not, so that no patch holds
// a .runner path, and the out dir, log, patch, cassette and continued run.
func (r *execRun) excludes() []string {
	out := []string{permission.RunnerDir}
	if c := r.continued; c != nil {
		out = append(out, c.history.header.Excludes...) // the earlier runs' out dirs
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

// finalPatch records the work tree once more and writes the patch from
// the base tree (changes.patch or --patch) and the final patch event (step
// null). Without a base snapshot there is nothing to diff: it writes an
// empty patch file so the out dir is complete.
func (r *execRun) finalPatch(ctx context.Context) error {
	if r.writer == nil {
		return skip("no outputs")
	}
	if err := os.MkdirAll(filepath.Dir(r.patchPath), 0o755); err != nil {
		return fmt.Errorf("%w: patch: %w", ErrInfra, err)
	}
	f, err := os.Create(r.patchPath)
	if err != nil {
		return fmt.Errorf("%w: patch: %w", ErrInfra, err)
	}
	defer f.Close()
	if r.store == nil || r.base == "" {
		return skip("no base snapshot")
	}
	tree, err := r.store.Track(ctx)
	if err != nil {
		return fmt.Errorf("%w: final snapshot: %w", ErrInfra, err)
	}
	files, err := r.store.Patch(ctx, r.base, tree, f)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		// A part of a patch must not pass for the patch, and on a full
		// disk its space is what run.finished and result.json need.
		_ = f.Truncate(0)
		return fmt.Errorf("%w: %w", ErrInfra, err) // the stage adds "patch: "
	}
	r.files = files
	if r.history != nil {
		_ = r.history.tree(string(tree), true)
	}
	if err := r.writeRunPatch(ctx, tree); err != nil {
		return err
	}
	p := patchEvent(nil, tree, files)
	p.Tracking = "full (final snapshot)"
	p.IgnoredWritten = r.ignoredWritten(ctx)
	r.ignored = p.IgnoredWritten
	return r.emit(p)
}

// ignoredWritten names the files in paths git ignores that were created
// or changed since the base snapshot (nil when none): no patch holds them
// and they stay in the work tree, so the run says so. A search that fails
// is recorded as its error; it does not fail the patch.
func (r *execRun) ignoredWritten(ctx context.Context) *event.IgnoredWritten {
	got, err := r.store.IgnoredWritten(ctx, r.since, event.MaxIgnoredListed)
	switch {
	case err != nil:
		return &event.IgnoredWritten{Paths: []string{}, Error: err.Error()}
	case got.Total == 0:
		return nil
	}
	return &event.IgnoredWritten{Paths: got.Paths, Total: got.Total, Isolated: r.isolated}
}

// patchEvent is a patch event for files changed up to tree.
func patchEvent(step *int, tree snapshot.Tree, files []snapshot.FileChange) event.Patch {
	p := event.Patch{Step: step, Tree: string(tree), Files: eventFiles(files)}
	for _, f := range files {
		p.Additions += f.Additions
		p.Deletions += f.Deletions
	}
	return p
}

// eventFiles converts snapshot changes to the event schema's.
func eventFiles(files []snapshot.FileChange) []event.FileChange {
	out := make([]event.FileChange, 0, len(files))
	for _, f := range files {
		out = append(out, event.FileChange{
			Path: f.Path, OldPath: f.OldPath, Status: f.Status,
			Additions: f.Additions, Deletions: f.Deletions, Binary: f.Binary, Omitted: f.Omitted,
		})
	}
	return out
}

// stepSnapshots is the runner's Snapshotter over the run's store: after a
// step that changed files it records the tree (only the touched paths when
// they are known) and diffs it against the base tree.
type stepSnapshots struct {
	store   *snapshot.Store
	base    snapshot.Tree
	history *historyFile // records each step's tree; nil keeps none
}

// Track implements runner.Snapshotter. After a step whose commands may
// have written anywhere (all), it re-stats what the store's inotify watch
// saw change, or walks the whole tree when the watch cannot be trusted.
func (s stepSnapshots) Track(ctx context.Context, touched []string, all bool) (runner.StepSnapshot, error) {
	var tree snapshot.Tree
	var err error
	how := "paths"
	if all {
		var t snapshot.Tracking
		tree, t, err = s.store.TrackChanged(ctx, touched)
		how = t.String()
	} else {
		tree, err = s.store.TrackPaths(ctx, touched)
	}
	if err != nil {
		return runner.StepSnapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	if s.history != nil {
		_ = s.history.tree(string(tree), false) // the history logs its own failures
	}
	files, err := s.store.Diff(ctx, s.base, tree)
	if err != nil {
		return runner.StepSnapshot{}, fmt.Errorf("snapshot diff: %w", err)
	}
	return runner.StepSnapshot{Tree: string(tree), Files: eventFiles(files), Tracking: how}, nil
}
