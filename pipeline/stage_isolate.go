package pipeline

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/seed43ef5acb/runner/internal/copytree"
)

// isolateCopy, with --isolate, copies the work tree (.git included, so
// the user's index seeds the base snapshot) into the run's temporary
// directory, leaving out the run's own outputs when they lie inside it.
// It runs after the out dir exists, so a signal or a file vanishing
// during a long copy still ends in run.finished.
func (r *execRun) isolateCopy(ctx context.Context) error {
	if !r.opts.Isolate {
		return skip("no --isolate")
	}
	skipRel := map[string]bool{}
	for _, rel := range r.excludes() { // relative to the user's work tree, still r.workTree
		skipRel[rel] = true
	}
	dst := filepath.Join(r.runTemp.Path(), filepath.Base(r.repo))
	if err := copytree.Copy(ctx, r.repo, dst, copytree.Options{Skip: skipRel, BeforeOpen: r.opts.copyHook}); err != nil {
		return fmt.Errorf("%w: --isolate: copy %s: %w", ErrInfra, r.repo, err)
	}
	r.workTree, r.isolated = dst, true
	return nil
}
