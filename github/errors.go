package github

import "errors"

// Sentinel errors, checked with errors.Is.
var (
	// ErrEnv means a GITHUB_* variable is missing or malformed.
	ErrEnv = errors.New("github: bad actions environment")
	// ErrEvent means an event payload could not be understood.
	ErrEvent = errors.New("github: bad event payload")
	// ErrFileCommand means a GITHUB_OUTPUT name or value cannot be written.
	ErrFileCommand = errors.New("github: bad file command")
	// ErrNoNumber means the event names no issue or pull request.
	ErrNoNumber = errors.New("github: event has no issue or pull request number")
	// ErrLease means the remote branch moved since it was read, so the
	// force-with-lease push was refused.
	ErrLease = errors.New("github: remote branch changed (lease broken)")
	// ErrPush means the branch could not be built or pushed.
	ErrPush = errors.New("github: push failed")
	// ErrNoChanges means the patched tree equals the base tree: there is
	// nothing to push.
	ErrNoChanges = errors.New("github: no changes to push")
	// ErrNoToken means neither GITHUB_TOKEN nor GH_TOKEN is set, so the
	// API cannot be called.
	ErrNoToken = errors.New("github: no token: GITHUB_TOKEN and GH_TOKEN are empty")
	// ErrBranchName means a branch name is not a valid git ref name.
	ErrBranchName = errors.New("github: invalid branch name")
	// ErrPullRequest marks a failure of the pull request calls themselves
	// (list, create, update), after the branch was pushed.
	ErrPullRequest = errors.New("github: pull request call failed")
	// ErrLabels marks a failure to label a pull request that exists.
	ErrLabels = errors.New("github: labels call failed")
	// ErrReview marks a failure of the review calls (list, create,
	// update) of review mode.
	ErrReview = errors.New("github: review call failed")
	// ErrReadOnly means GitHub refused to write the review (403): the
	// token is read-only, as on a pull request from a fork.
	ErrReadOnly = errors.New("github: the token may not write reviews")
	// ErrReviewRetire means the new review was posted but an earlier one
	// of the task could not be retired (its comments deleted, its body
	// replaced or its verdict dismissed).
	ErrReviewRetire = errors.New("github: earlier review not retired")
)

// markedError adds a sentinel to an error without changing its text.
type markedError struct {
	mark, err error
}

func (e *markedError) Error() string   { return e.err.Error() }
func (e *markedError) Unwrap() []error { return []error{e.mark, e.err} }

// mark returns err marked with the sentinel mark (nil for a nil err).
func mark(mark, err error) error {
	if err == nil {
		return nil
	}
	return &markedError{mark: mark, err: err}
}

// Sentinels of FetchHistory: why an earlier run's history could not be
// had. A run that meets one starts fresh and says which.
var (
	// ErrArtifactNotFound means the workflow run has no artifact of that
	// name (never uploaded, deleted, or the run is gone).
	ErrArtifactNotFound = errors.New("github: history artifact not found")
	// ErrArtifactExpired means the artifact passed its retention period.
	ErrArtifactExpired = errors.New("github: history artifact expired")
	// ErrArtifactTooLarge means the archive or a file in it is over the
	// size limit.
	ErrArtifactTooLarge = errors.New("github: history artifact too large")
)
