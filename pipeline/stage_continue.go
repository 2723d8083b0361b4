package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/internal/gitignore"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/historyfile"
	"github.com/seed43ef5acb/runner/runner/outdir"
	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// continued is what a run that continues an earlier one (--continue)
// knows of it.
type continued struct {
	dir     string
	history *historyfile.History
	forced  bool
	runBase snapshot.Tree // the work tree when this run started: run.patch's base
	// chain are the conversation's runs before this one, earliest first
	// (the earlier run's own chain, then the earlier run).
	chain []historyfile.ChainRun
	// why lists the refusals --force (or a GitHub continue) overrode.
	why []string
}

// loadContinued reads the earlier run's history (setup: a missing or
// corrupt history, or a different spec, is refused before anything is
// written).
func (r *execRun) loadContinued(ctx context.Context) error {
	if r.opts.Continue == "" {
		return skip("a fresh run")
	}
	if err := r.resolveContinueLast(); err != nil {
		return err
	}
	h, err := historyfile.Read(filepath.Join(r.opts.Continue, outdir.HistoryFile))
	if err != nil {
		return err
	}
	c := &continued{dir: r.opts.Continue, history: h}
	if err := r.checkHistoryDigest(c); err != nil {
		return err
	}
	last, err := summarizeRun(ctx, r.opts.Continue, h.Header)
	if err != nil {
		return err
	}
	c.chain = append(append([]historyfile.ChainRun(nil), h.Header.Chain...), last)
	if h.Header.SpecSHA256 != r.specSHA {
		if !r.opts.Force {
			return fmt.Errorf("%w: run %s was made from a different task spec (sha256 %.12s…, %s is %.12s…): continue with the spec it ran, or give --force to go on with this one",
				ErrHistory, h.Header.RunID, h.Header.SpecSHA256, r.opts.Task, r.specSHA)
		}
		c.forced, c.why = true, append(c.why, "the task spec changed")
	}
	r.continued = c
	return nil
}

// checkContinued compares the work tree with the earlier run's last
// snapshot and takes the earlier run's base tree as this run's, so the
// patch is the whole conversation's change (main stage, after the
// snapshot: it needs the store).
func (r *execRun) checkContinued(ctx context.Context) error {
	c := r.continued
	if c == nil {
		return skip("a fresh run")
	}
	if err := r.waitBase(); err != nil {
		return err
	}
	h := c.history
	want := snapshot.Tree(cmp.Or(h.LastTree, h.Header.BaseTree))
	if want != r.base {
		if h.Header.Isolated && !r.opts.Force {
			return fmt.Errorf("%w: run %s worked on a temporary copy (--isolate), which is gone: apply its patch to the work tree first (from any directory: %s), then continue; or give --force to take the tree as it is",
				ErrHistory, h.Header.RunID, applyCommand(r.repo, filepath.Join(c.dir, outdir.PatchFile)))
		}
		if !r.opts.Force {
			return fmt.Errorf("%w: the work tree changed since run %s ended (its last snapshot is tree %.12s…, the work tree is now %.12s…): continue in the tree the run left, or give --force to take the tree as it is",
				ErrHistory, h.Header.RunID, want, r.base)
		}
		c.forced, c.why = true, append(c.why, "the work tree changed since the run ended")
	}
	old := snapshot.Tree(h.Header.BaseTree)
	if r.isolated && r.opts.SnapshotDir == "" { // this run's store is new: the base is in --repo's
		_ = r.store.Take(ctx, r.repo, old)
	}
	if _, err := r.store.Diff(ctx, old, r.base); err != nil {
		if !r.opts.Force {
			return fmt.Errorf("%w: the base tree %.12s… of run %s is not in this work tree's snapshot store (%v): continue on the machine and in the directory the run used, or give --force to take the work tree as the new base",
				ErrHistory, old, h.Header.RunID, err)
		}
		c.forced, c.why = true, append(c.why, "its base tree is not in this work tree's snapshot store")
		fmt.Fprintf(r.opts.Stderr, "runner: warning: run %s's base tree is gone; changes.patch holds this run's changes only\n", h.Header.RunID)
		c.runBase = r.base
		return nil
	}
	c.runBase, r.base = r.base, old
	return nil
}

// continuedEvent is run.started's continues field, nil for a fresh run.
func (r *execRun) continuedEvent() *event.Continued {
	c := r.continued
	if c == nil {
		return nil
	}
	return &event.Continued{RunID: c.history.Header.RunID, Dir: c.dir,
		Steps: c.history.Transcript.Steps, Forced: c.forced}
}

// writeRunPatch writes run.patch, a continued run's own change (from the
// tree it started on to tree), beside changes.patch.
func (r *execRun) writeRunPatch(ctx context.Context, tree snapshot.Tree) error {
	c := r.continued
	if c == nil || c.runBase == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(r.outDir, outdir.RunPatch))
	if err != nil {
		return fmt.Errorf("%w: run patch: %w", ErrInfra, err)
	}
	defer f.Close()
	files, err := r.store.Patch(ctx, c.runBase, tree, f)
	if err != nil {
		return fmt.Errorf("%w: run patch: %w", ErrInfra, err)
	}
	r.runFiles = files
	return f.Sync()
}

// applyCommand is a shell command that applies patch to the work tree dir
// from any directory. Below the top of a git work tree, git apply takes
// the patch's paths from the top and silently skips those outside the
// current directory, so the command names dir's prefix (--directory).
func applyCommand(dir, patch string) string {
	if abs, err := filepath.Abs(patch); err == nil {
		patch = abs
	}
	args := []string{"git", "-C", dir, "apply"}
	if repo, err := gitignore.FindRepo(dir); err == nil && repo != nil && repo.Prefix != "" {
		args = append(args, "--directory="+strings.TrimSuffix(repo.Prefix, "/"))
	}
	args = append(args, patch)
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:+@%,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
