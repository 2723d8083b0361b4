package pipeline

import (
	"context"
)

// emitStartedLate writes run.started for a run that failed before its
// stage, ahead of the final stages' events.
func (r *execRun) emitStartedLate(ctx context.Context) error {
	if r.started || r.writer == nil {
		return nil
	}
	return r.emitStarted(ctx)
}
