package event

// PublishTarget names the delivery call of a publish event.
type PublishTarget string

// Publish targets (publish "target").
const (
	PublishPush        PublishTarget = "push"         // the branch with the patch
	PublishPullRequest PublishTarget = "pull_request" // opening or updating the pull request
	PublishLabels      PublishTarget = "labels"       // the pull request's labels
	PublishComment     PublishTarget = "comment"      // the sticky comment's final report
	PublishReview      PublishTarget = "review"       // the pull request review of review mode
)

// Publish is the outcome of one delivery call after the run (GitHub
// Actions only), written before run.finished. URL is what was created or
// updated, kept when a later part of the same call failed (a pull request
// opened whose labels could not be added); Error says why it failed.
type Publish struct {
	Target PublishTarget `json:"target"`
	OK     bool          `json:"ok"`
	URL    string        `json:"url,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// EventType is "publish".
func (Publish) EventType() string { return "publish" }
