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
	// Branch and Commit are what a push target pushed.
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Review is what a review call posted (target review, ok).
	Review *PublishedReview `json:"review,omitempty"`
	// Neutralized lists the images, media tags and links taken out of
	// the text the call posted (docs/security.md).
	Neutralized []NeutralizedURL `json:"neutralized,omitempty"`
}

// NeutralizedURL is one image ("image"), HTML media tag ("html") or link
// ("link") neutralized in posted text, with the host it named.
type NeutralizedURL struct {
	Kind string `json:"kind"`
	Host string `json:"host,omitempty"`
}

// PublishedReview is the pull request review of review mode as posted:
// the publish event's review and run.finished's (and so result.json's).
type PublishedReview struct {
	URL string `json:"url"`
	// Event is the review's event as posted: APPROVE, REQUEST_CHANGES or
	// COMMENT; Requested is the verdict's when it differs (GitHub refused
	// it, or the spec's approve: false).
	Event     string `json:"event"`
	Requested string `json:"requested,omitempty"`
	Inline    int    `json:"inline"`  // findings posted as line comments
	InBody    int    `json:"in_body"` // findings in the review body (outside the diff)
	// Updated: the task's live review of the same commit was kept and its
	// body updated; Retired counts earlier reviews replaced by this one.
	Updated bool `json:"updated,omitempty"`
	Retired int  `json:"retired,omitempty"`
	// Note says why the event or the line comments differ from the plan.
	Note string `json:"note,omitempty"`
}

// EventType is "publish".
func (Publish) EventType() string { return "publish" }
