package pipeline

import (
	"context"
)

// loadPRContinued loads the history a pull request's session fetched
// (setupPRSession sets opts.Continue to it) when no --continue was loaded
// before the provider was set up.
func (r *execRun) loadPRContinued(ctx context.Context) error {
	if r.continued != nil || r.opts.Continue == "" {
		return skip("no pull request history")
	}
	return r.loadContinued(ctx)
}
