package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/internal/workflowcmd"
	"github.com/seed43ef5acb/runner/runner/event"
)

// Review mode (github.review): after a successful run on a pull request,
// the structured output's findings become one pull request review, a
// publish event records it (URL, event, findings inline and in the
// body), run.finished carries it into result.json, and the review-url
// output names it. A review that cannot be posted is a delivery failure
// like any other (delivery_failed, exit 3), with the findings in the step
// summary so that none is lost; a read-only token (a pull request from a
// fork) says so.

// postReview posts the run's review when the spec asks for one.
func (r *execRun) postReview(ctx context.Context, st *runStatus) error {
	switch {
	case r.spec.GitHub.Review == nil:
		return skip("no review asked")
	case r.gh == nil:
		return skip("not running in GitHub Actions")
	case !r.gh.HasToken():
		return skip("no token") // said once, at the start
	case !r.gh.Event.GitHub.IsPR || r.gh.Event.GitHub.Number <= 0:
		// A green job that posted nothing must say why.
		r.annotate(workflowcmd.Annotation{Level: workflowcmd.Warning, Title: "runner: review", Message: fmt.Sprintf(
			"no review: the %s event names no pull request (give --pr N, or run on pull_request)", r.gh.Event.GitHub.EventName)})
		return skip("no pull request")
	case st.Status != event.StatusSuccess:
		fmt.Fprintf(r.opts.Stderr, "runner: no review: the run ended with status %s\n", st.Status)
		return skip("run not successful")
	}
	findings, err := github.ParseFindings(r.structuredOutput())
	if err != nil {
		r.reviewFailed(st, nil, "the review could not be prepared", err)
		return nil
	}
	rv, err := r.gh.Reviewer(ctx)
	if err != nil {
		r.reviewFailed(st, nil, "the review could not be prepared", err)
		return nil
	}
	plan, err := r.reviewPlan(ctx, rv, findings)
	if err != nil { // the findings still reach the step summary
		r.reviewFailed(st, &plan, "the pull request's diff could not be read", err)
		return nil
	}
	r.warnCheckout()
	out, err := rv.Post(ctx, plan)
	switch {
	case errors.Is(err, github.ErrReadOnly):
		why := r.readOnlyReason()
		r.reviewSummary = plan.SummaryMarkdown(r.redactor.Redact("The token may not write reviews (" + why + "): " + err.Error()))
		err = fmt.Errorf("the token may not write reviews (%s), the findings are in the step summary: %w", why, err)
		r.deliveryFailed(st, event.PublishReview, "the review could not be posted", err, "")
		return nil
	case err != nil && !errors.Is(err, github.ErrReviewRetire):
		r.reviewFailed(st, &plan, "the review could not be posted", err)
		return nil
	}
	r.review = publishedReview(plan, out)
	r.published(event.Publish{Target: event.PublishReview, OK: true, URL: out.URL, Review: r.review})
	if out.Note != "" {
		r.annotate(workflowcmd.Annotation{Level: workflowcmd.Warning, Title: "runner: review", Message: r.redactor.Redact(out.Note)})
	}
	if err != nil { // posted, but an earlier review is still live
		r.deliveryFailed(st, event.PublishReview, "review "+out.URL+" posted, the earlier review could not be retired", err, out.URL)
	}
	return nil
}

// reviewPlan reads the pull request's diff and sorts the findings into
// line comments and the body. When the diff cannot be read the plan has
// every finding in the body (for the step summary) and the error.
func (r *execRun) reviewPlan(ctx context.Context, rv *github.Reviewer, findings github.Findings) (github.ReviewPlan, error) {
	c := r.gh.Event.GitHub
	files, err := rv.Files(ctx)
	plan := github.PlanReview(r.spec.Name, c.HeadSHA, findings, files)
	if plan.Event == github.ReviewApprove && !r.spec.GitHub.Review.Approve {
		plan.Event = github.ReviewComment
		plan.Note = "The verdict is approve; this task posts approvals as comments (github.review.approve: false)."
	}
	plan.Footer = r.reviewFooter()
	return plan, err
}

// readOnlyReason says why the token may not write: a pull request from a
// fork (its pull_request runs get a read-only token), else the workflow's
// permissions.
func (r *execRun) readOnlyReason() string {
	c := r.gh.Event.GitHub
	if c.HeadRepo != "" && !strings.EqualFold(c.HeadRepo, c.Repository) {
		return fmt.Sprintf("the pull request comes from the fork %s, and a pull_request run for a fork gets a read-only token", c.HeadRepo)
	}
	return "give the workflow permissions: pull-requests: write"
}

// publishedReview is the review as the publish event and run.finished
// record it.
func publishedReview(plan github.ReviewPlan, out github.ReviewOutcome) *event.PublishedReview {
	p := &event.PublishedReview{URL: out.URL, Event: out.Event, Inline: out.Inline, InBody: out.InBody,
		Updated: out.Updated, Retired: out.Retired, Note: strings.TrimSpace(plan.Note + " " + out.Note)}
	if plan.Requested != out.Event {
		p.Requested = plan.Requested
	}
	return p
}

// reviewFailed records a review that was not posted: a failed publish
// event (a ::warning), delivery_failed, and, when the plan is known, the
// findings in the step summary.
func (r *execRun) reviewFailed(st *runStatus, plan *github.ReviewPlan, what string, err error) {
	if plan != nil {
		r.reviewSummary = plan.SummaryMarkdown(r.redactor.Redact(what + ": " + err.Error()))
	}
	r.deliveryFailed(st, event.PublishReview, what, err, "")
}

// reviewFooter is the review body's provenance line.
func (r *execRun) reviewFooter() string {
	parts := []string{"<sub>runner", fmt.Sprintf("task `%s`", r.spec.Name)}
	if u := r.gh.Env.RunURL(); u != "" {
		parts = append(parts, fmt.Sprintf("[run](%s)", u))
	}
	if r.modelName != "" {
		parts = append(parts, fmt.Sprintf("model `%s`", r.modelName))
	}
	if c := r.result.CostUSD; c != nil {
		parts = append(parts, "cost "+event.FormatCost(*c))
	}
	return strings.Join(parts, " · ") + "</sub>"
}

// warnCheckout warns when the work tree is not at the pull request's head
// commit (actions/checkout checks out the merge commit of a pull_request
// event by default): the line numbers the agent read may then not be the
// head's, which the review's comments are put on.
func (r *execRun) warnCheckout() {
	head := r.gh.Event.GitHub.HeadSHA
	at, err := github.HeadCommit(r.repo)
	if err != nil || head == "" || at == head {
		return
	}
	r.annotate(workflowcmd.Annotation{Level: workflowcmd.Warning, Title: "runner: review", Message: fmt.Sprintf(
		"the work tree is at %s, not at the pull request's head %s: line numbers may not match the head the review is on; "+
			"check out the head (actions/checkout with ref: ${{ github.event.pull_request.head.sha }})", short(at), short(head))})
}

// short is a commit id's first 12 characters.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
