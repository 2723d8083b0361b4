package pipeline

import (
	"context"
)

// emitStartedLate writes run.started for a run that failed before its
// stage, or whose start was held (holdStart), ahead of the final stages'
// events.
func (r *execRun) emitStartedLate(ctx context.Context) error {
	if h := r.held; h != nil { // the agent stage did not reach its end
		_ = r.releaseStart(ctx) // the base's error is a main stage's
		return h.logErr
	}
	if r.started || r.writer == nil {
		return nil
	}
	return r.emitStarted(ctx)
}
