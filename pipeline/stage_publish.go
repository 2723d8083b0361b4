package pipeline

import "context"

// publish is where GitHub publishing (the sticky comment, the pull
// request) would run. Under GitHub Actions the action's finalize step does
// it from the finished event log (`runner github finalize`), so that it
// also happens when this process is killed; exec itself skips it.
func (r *execRun) publish(_ context.Context) error {
	switch {
	case r.spec == nil || (!r.spec.GitHub.Comment && r.spec.GitHub.PullRequest == nil):
		return skip("the task asks for no publishing")
	case r.getenv("GITHUB_ACTIONS") != "true":
		return skip("not running in GitHub Actions")
	default:
		return skip("publishing is done by the GitHub Action's finalize step (runner github finalize)")
	}
}
