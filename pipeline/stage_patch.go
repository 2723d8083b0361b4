package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline/ownfiles"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// finalPatch records the work tree once more and writes the patch from
// the base tree (changes.patch or --patch) and the final patch event (step
// null). The record re-stats what the store's watch saw change since the
// last step (checks, servers, leftovers), or walks the whole tree when the
// watch cannot be trusted. Without a base snapshot there is nothing to
// diff: it writes an empty patch file so the out dir is complete.
func (r *execRun) finalPatch(ctx context.Context) error {
	if r.writer == nil {
		return skip("no outputs")
	}
	f, err := r.createPatchFile()
	if err != nil {
		return fmt.Errorf("%w: patch: %w", ErrInfra, err)
	}
	defer f.Close()
	if r.store == nil || r.base == "" {
		return skip("no base snapshot")
	}
	tree, how, err := r.store.TrackChanged(ctx, nil)
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
		_ = r.history.Tree(string(tree), true)
		r.keepSnapshots(ctx, tree)
	}
	if err := r.writeRunPatch(ctx, tree); err != nil {
		return err
	}
	p := patchEvent(nil, tree, files)
	p.Tracking = how.String()
	p.IgnoredWritten = r.ignoredWritten(ctx)
	r.ignored = p.IgnoredWritten
	return r.emit(p)
}

// createPatchFile creates the patch file. One in the work tree (--patch
// there) is made through safefs: a symlink a command put at it, or in
// place of a directory above it, is replaced, never written through.
func (r *execRun) createPatchFile() (*os.File, error) {
	abs, err := filepath.Abs(r.patchPath)
	if err == nil && r.workTree != "" && ownfiles.Within(abs, r.workTree) {
		if rel, err := filepath.Rel(r.workTree, abs); err == nil {
			root := r.treeRoot()
			f, err := root.Create(rel, 0o644)
			if replaced := root.Replaced(); len(replaced) > 0 {
				fmt.Fprintf(r.opts.Stderr, "runner: warning: a command put %s where the patch goes; removed, not followed\n",
					strings.Join(replaced, ", "))
			}
			return f, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(r.patchPath), 0o755); err != nil {
		return nil, err
	}
	return os.Create(r.patchPath)
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

// keepSnapshots copies an --isolate run's base and final trees into the
// snapshot store of --repo, whose copy's store goes when the run ends: a
// run that continues this one (in --repo, or isolated again) diffs
// against that base. A failure is a warning: --force still continues.
func (r *execRun) keepSnapshots(ctx context.Context, tree snapshot.Tree) {
	if !r.isolated || r.opts.SnapshotDir != "" {
		return
	}
	if err := r.store.Keep(ctx, r.repo, r.base, tree); err != nil {
		fmt.Fprintf(r.opts.Stderr, "runner: warning: %v; --continue of this run will need --force\n", err)
	}
}
