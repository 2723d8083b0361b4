package pipeline

import (
	"context"
	"path/filepath"

	"github.com/seed43ef5acb/runner/internal/safefs"

	"github.com/seed43ef5acb/runner/pipeline/gate"
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
