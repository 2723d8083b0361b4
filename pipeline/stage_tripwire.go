package pipeline

import (
	"context"

	"github.com/seed43ef5acb/runner/pipeline/gate"
)

// armTripwire records .git's watched files and the submodules' digests,
// .runner's earlier runs and the task spec in the work tree (main stage
// "tripwire", right after the base snapshot).
func (r *execRun) armTripwire(_ context.Context) error {
	r.tripwire = gate.ArmTripwire(r.workTree)
	r.stateTripwire = r.armStateTripwire()
	r.specGuard = gate.ArmTaskSpec(r.opts.Task, r.repo, r.workTree)
	return nil
}
