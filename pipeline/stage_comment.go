package pipeline

import (
	"context"
	"fmt"

	"github.com/seed43ef5acb/runner/internal/workflowcmd"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/report"
)

// commentWanted: RUNNER_COMMENT (true/false in any case, the action's input) wins
// over the spec's github.comment.
func (r *execRun) commentWanted() bool {
	if on, set := r.githubSwitch("RUNNER_COMMENT"); set {
		return on
	}
	return r.spec.GitHub.Comment
}

// startComment posts or resets the sticky comment ("running"). A comment
// that cannot be written is reported and the run goes on.
func (r *execRun) startComment(ctx context.Context) error {
	switch {
	case r.gh == nil:
		return skip("not running in GitHub Actions")
	case !r.gh.HasToken():
		return skip("no token")
	case !r.commentWanted():
		return skip("no comment asked")
	case r.gh.Event.GitHub.Number == 0:
		why := fmt.Sprintf("a comment is asked (github.comment, RUNNER_COMMENT), but a %s event has no issue or pull request to post it on; "+
			"the report is in the step summary and the out dir", r.gh.Event.GitHub.EventName)
		r.annotate(workflowcmd.Annotation{Level: workflowcmd.Notice, Title: "runner: no comment", Message: why})
		if !r.opts.Quiet {
			fmt.Fprintln(r.opts.Stderr, "runner: note: "+why)
		}
		return skip("the event has no issue or pull request")
	}
	s, err := r.gh.Sticky(ctx, r.spec.Name)
	if err != nil {
		r.deliveryProblem("the sticky comment could not be started", err)
		return skip("comment: %v", err)
	}
	// Kept when Start fails: the final report is tried again at the end.
	r.sticky = s
	if r.pr != nil && r.pr.ref.Valid() { // a run cut short leaves the way to the last history
		s.Header = r.pr.ref.Marker()
	}
	if _, err := s.Start(ctx, r.gh.Env.RunURL()); err != nil {
		r.deliveryProblem("the sticky comment could not be started", err)
		return skip("comment: %v", err)
	}
	return nil
}

// finishComment, before run.finished, replaces the sticky comment's body
// with the run's report as run.finished will state it (delivery
// included), and records the call.
func (r *execRun) finishComment(ctx context.Context, st *runStatus) error {
	if r.sticky == nil {
		return skip("no sticky comment")
	}
	var md string
	var err error
	if r.pr != nil { // the conversation's comment on the pull request
		md, r.sticky.Header, err = r.conversationComment(ctx, st)
	} else {
		md, err = r.renderReport(ctx, st, report.GitHubCommentMax)
	}
	if err != nil {
		return fmt.Errorf("%w: report: %w", ErrInfra, err)
	}
	defer r.finishPRComment(ctx, st)
	url, err := r.sticky.Finish(ctx, md)
	if url != "" {
		r.commentURL = url
	}
	if err != nil {
		r.deliveryFailed(st, event.PublishComment, "the sticky comment could not be posted", err, url)
		return nil
	}
	r.published(event.Publish{Target: event.PublishComment, OK: true, URL: url})
	return nil
}
