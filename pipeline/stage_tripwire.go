package pipeline

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/seed43ef5acb/runner/internal/safefs"

	"github.com/seed43ef5acb/runner/pipeline/gate"
	"github.com/seed43ef5acb/runner/pipeline/ownfiles"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// armTripwire records .git's watched files and the submodules' digests,
// .runner's earlier runs and the task spec in the work tree (main stage
// "tripwire", right after the base snapshot).
func (r *execRun) armTripwire(_ context.Context) error {
	r.tripwire = gate.ArmTripwire(r.workTree)
	r.stateTripwire = r.armStateTripwire()
	if r.opts.TaskData == nil { // a spec from stdin is in no work tree
		r.specGuard = gate.ArmTaskSpec(r.opts.Task, r.repo, r.workTree)
	}
	return nil
}

// armStateTripwire records .runner's files when the sandbox's layers do
// not protect them (nil otherwise, or when there is no .runner).
func (r *execRun) armStateTripwire() *ownfiles.State {
	if r.sandbox != nil && slices.Contains(r.sandbox.Layers(), sandbox.LayerNamespaces) {
		return nil // read-only in the sandbox (setupSandbox)
	}
	return ownfiles.ArmState(r.treeRoot(), ownfiles.TreeRel(r.workTree, r.outDir))
}

// treeRoot is the work tree as a safefs.Root of its own (each repair
// names what it replaced), resolved once per work tree (--isolate
// changes it), before any command runs.
func (r *execRun) treeRoot() *safefs.Root {
	if r.treeReal[0] != r.workTree {
		r.treeReal = [2]string{r.workTree, r.workTree}
		if real, err := filepath.EvalSymlinks(r.workTree); err == nil {
			r.treeReal[1] = real
		}
	}
	return safefs.New(r.treeReal[1])
}
