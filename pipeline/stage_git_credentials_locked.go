package pipeline

import "context"

// hideGitCredentialsLocked is hideGitCredentials again once the work
// tree's lock is held: a run that waited for another found the
// credentials that run had taken out, and put back since.
func (r *execRun) hideGitCredentialsLocked(ctx context.Context) error {
	return r.hideGitCredentials(ctx)
}
