package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/cenkalti/backoff/v5"
	gh "github.com/google/go-github/v60/github"
)

// Reviewer posts a task's pull request review and keeps it one review
// across runs: the task's earlier reviews are found by their hidden
// marker, among the reviews of Self only (anyone can paste a marker).
//
// A submitted review's event, commit and line comments cannot change
// (the API edits only its body and adds no comment to it), so a run whose
// review differs from the live one posts a new review and retires the
// old: its line comments are deleted (the token may delete its own), its
// body becomes a link to the new review with a retired marker, and it is
// dismissed when it approved or requested changes (so a stale verdict
// does not block or allow a merge; GitHub dismisses no other state). A
// run whose review equals the live one (same commit, verdict and line
// comments: a re-run of the same push) only updates its body.
type Reviewer struct {
	Client *gh.Client
	Owner  string
	Repo   string
	Number int // pull request number
	// Self is the token identity's login; when empty it is resolved with
	// SelfLogin on first use.
	Self string
	// BackOff paces the retries of transient API failures (nil:
	// exponential from 1s, 3 tries in all).
	BackOff backoff.BackOff
}

// ReviewOutcome is what Post did.
type ReviewOutcome struct {
	URL    string
	ID     int64
	Event  string // the event as posted (COMMENT when GitHub refused the verdict's)
	Inline int    // findings posted as line comments
	InBody int    // findings in the review body
	// Updated: the live review was the same review and only its body was
	// updated (no new review).
	Updated bool
	Retired int    // earlier reviews retired
	Note    string // why the event or the line comments differ from the plan
}

// Post posts plan as the task's one review (see Reviewer), retried as a
// whole on transient failures: each try looks for the live review again,
// so a create that went through before an error is found, not repeated.
// Errors: a 403 (a read-only token, as a pull request from a fork gets) is
// marked ErrReadOnly; a failure to retire an earlier review after the new
// one was posted is marked ErrReviewRetire and comes with the outcome;
// every other failure is marked ErrReview.
func (rv *Reviewer) Post(ctx context.Context, p ReviewPlan) (ReviewOutcome, error) {
	out, err := retryAPI(ctx, rv.BackOff, func() (ReviewOutcome, error) { return rv.postOnce(ctx, p) })
	switch {
	case err == nil, errors.Is(err, ErrReviewRetire):
		return out, err
	case isStatus(err, http.StatusForbidden):
		return out, mark(ErrReadOnly, err)
	}
	return out, mark(ErrReview, err)
}

func (rv *Reviewer) postOnce(ctx context.Context, p ReviewPlan) (ReviewOutcome, error) {
	own, err := rv.ownReviews(ctx, p.Task)
	if err != nil {
		return ReviewOutcome{}, err
	}
	var out ReviewOutcome
	kept, err := rv.reusable(ctx, own, p)
	if err != nil {
		return ReviewOutcome{}, err
	}
	if kept != nil {
		out, err = rv.update(ctx, kept, p)
	} else {
		kept, out, err = rv.create(ctx, p)
	}
	if err != nil {
		return ReviewOutcome{}, err
	}
	var errs []error
	for _, old := range own {
		if old.GetID() == kept.GetID() {
			continue
		}
		if err := rv.retire(ctx, old, p, out.URL); err != nil {
			errs = append(errs, err)
			continue
		}
		out.Retired++
	}
	if err := errors.Join(errs...); err != nil {
		return out, backoff.Permanent(mark(ErrReviewRetire, err)) // the new review stands: do not post it again
	}
	return out, nil
}

// ownReviews are the task's live reviews by Self, oldest first.
func (rv *Reviewer) ownReviews(ctx context.Context, task string) ([]*gh.PullRequestReview, error) {
	if rv.Self == "" {
		self, err := SelfLogin(ctx, rv.Client)
		if err != nil {
			return nil, err
		}
		rv.Self = self
	}
	var own []*gh.PullRequestReview
	opts := &gh.ListOptions{PerPage: 100}
	for {
		page, resp, err := rv.Client.PullRequests.ListReviews(ctx, rv.Owner, rv.Repo, rv.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("github: list reviews of %s/%s#%d: %w", rv.Owner, rv.Repo, rv.Number, err)
		}
		for _, r := range page {
			t, _, _, ok := parseReviewMarker(r.GetBody())
			if ok && t == taskField(task) && strings.EqualFold(r.GetUser().GetLogin(), rv.Self) && r.GetState() != "PENDING" {
				own = append(own, r)
			}
		}
		if resp.NextPage == 0 {
			return own, nil
		}
		opts.Page = resp.NextPage
	}
}

// reusable is the newest live review when it is the review plan would
// post (same commit, same verdict, same line comments), else nil.
func (rv *Reviewer) reusable(ctx context.Context, own []*gh.PullRequestReview, p ReviewPlan) (*gh.PullRequestReview, error) {
	if len(own) == 0 {
		return nil, nil
	}
	last := own[len(own)-1]
	_, commit, event, _ := parseReviewMarker(last.GetBody())
	if commit != p.Commit || event != p.Event || last.GetState() == "DISMISSED" {
		return nil, nil
	}
	comments, err := rv.reviewComments(ctx, last.GetID())
	if err != nil {
		return nil, err
	}
	have := make([]LineComment, len(comments))
	for i, c := range comments {
		have[i] = LineComment{Path: c.GetPath(), StartLine: c.GetOriginalStartLine(), Line: c.GetOriginalLine(), Body: c.GetBody()}
	}
	want := make([]LineComment, len(p.Comments))
	for i, c := range p.Comments {
		c.Body = postedForm(rv.Client, c.Body)
		want[i] = c
	}
	if !sameComments(have, p.Comments) && !sameComments(have, want) {
		return nil, nil
	}
	return last, nil
}

// sameComments compares two sets of line comments, in any order.
func sameComments(a, b []LineComment) bool {
	key := func(c LineComment) string {
		return fmt.Sprintf("%s\x00%d\x00%d\x00%s", c.Path, c.StartLine, c.Line, c.Body)
	}
	ka, kb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		ka[i] = key(a[i])
	}
	for i := range b {
		kb[i] = key(b[i])
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}

// update sets the live review's body to plan's (unless it already is).
func (rv *Reviewer) update(ctx context.Context, r *gh.PullRequestReview, p ReviewPlan) (ReviewOutcome, error) {
	event, note := p.Event, ""
	if r.GetState() != stateOf(p.Event) { // GitHub refused the verdict's event when it was posted
		event = ReviewComment
		note = fmt.Sprintf("GitHub did not accept %s from this token: the review is posted as a comment.", p.Event)
	}
	out := ReviewOutcome{URL: r.GetHTMLURL(), ID: r.GetID(), Event: event, Inline: len(p.Comments), InBody: len(p.Outside),
		Updated: true, Note: note}
	body := p.Body(event, note)
	if have := r.GetBody(); have == body || have == postedForm(rv.Client, body) {
		return out, nil
	}
	if _, _, err := rv.Client.PullRequests.UpdateReview(ctx, rv.Owner, rv.Repo, rv.Number, r.GetID(), body); err != nil {
		return ReviewOutcome{}, fmt.Errorf("github: update review %d: %w", r.GetID(), err)
	}
	return out, nil
}

// create posts plan as a new review. GitHub refuses (422) an APPROVE or
// REQUEST_CHANGES from some tokens (their own pull request; Actions not
// allowed to approve): the review is then posted as COMMENT and says so.
// When it refuses the line comments too (the diff moved since it was
// read), every finding goes into the body.
func (rv *Reviewer) create(ctx context.Context, p ReviewPlan) (*gh.PullRequestReview, ReviewOutcome, error) {
	event, notes := p.Event, []string(nil)
	for {
		body := p.Body(event, strings.Join(notes, " "))
		req := &gh.PullRequestReviewRequest{Body: gh.String(body), Event: gh.String(event), Comments: draftComments(p.Comments)}
		if p.Commit != "" { // else GitHub takes the head
			req.CommitID = gh.String(p.Commit)
		}
		r, _, err := rv.Client.PullRequests.CreateReview(ctx, rv.Owner, rv.Repo, rv.Number, req)
		if err == nil {
			return r, ReviewOutcome{URL: r.GetHTMLURL(), ID: r.GetID(), Event: event, Inline: len(p.Comments),
				InBody: len(p.Outside), Note: strings.Join(notes, " ")}, nil
		}
		err = fmt.Errorf("github: create review on %s/%s#%d: %w", rv.Owner, rv.Repo, rv.Number, err)
		if !isStatus(err, http.StatusUnprocessableEntity) {
			return nil, ReviewOutcome{}, err
		}
		switch {
		case event != ReviewComment:
			notes = append(notes, fmt.Sprintf("GitHub refused %s (%s): the review is posted as a comment.", event, apiMessage(err)))
			event = ReviewComment
		case len(p.Comments) > 0:
			notes = append(notes, fmt.Sprintf("GitHub refused the line comments (%s): every finding is listed here.", apiMessage(err)))
			p = p.allInBody("line comment refused")
		default:
			return nil, ReviewOutcome{}, err
		}
	}
}

// allInBody moves every line comment's finding into the body.
func (p ReviewPlan) allInBody(reason string) ReviewPlan {
	for _, f := range p.inline {
		p.Outside = append(p.Outside, Outside{Finding: f, Reason: reason})
	}
	p.Comments, p.inline = nil, nil
	return p
}

// draftComments are the API's review comments for cs (side RIGHT).
func draftComments(cs []LineComment) []*gh.DraftReviewComment {
	out := make([]*gh.DraftReviewComment, 0, len(cs))
	for _, c := range cs {
		d := &gh.DraftReviewComment{Path: gh.String(c.Path), Body: gh.String(c.Body), Side: gh.String("RIGHT"), Line: gh.Int(c.Line)}
		if c.StartLine > 0 {
			d.StartLine, d.StartSide = gh.Int(c.StartLine), gh.String("RIGHT")
		}
		out = append(out, d)
	}
	return out
}

// retire deletes an earlier review's line comments, points its body at
// the new review (with the retired marker) and dismisses it when it
// approved or requested changes.
func (rv *Reviewer) retire(ctx context.Context, r *gh.PullRequestReview, p ReviewPlan, newURL string) error {
	comments, err := rv.reviewComments(ctx, r.GetID())
	if err != nil {
		return err
	}
	for _, c := range comments {
		_, err := rv.Client.PullRequests.DeleteComment(ctx, rv.Owner, rv.Repo, c.GetID())
		if err != nil && !isStatus(err, http.StatusNotFound) {
			return fmt.Errorf("github: delete comment %d of review %d: %w", c.GetID(), r.GetID(), err)
		}
	}
	_, commit, _, _ := parseReviewMarker(r.GetBody())
	if _, _, err := rv.Client.PullRequests.UpdateReview(ctx, rv.Owner, rv.Repo, rv.Number, r.GetID(), RetiredBody(p.Task, commit, newURL)); err != nil {
		return fmt.Errorf("github: retire review %d: %w", r.GetID(), err)
	}
	if s := r.GetState(); s == "APPROVED" || s == "CHANGES_REQUESTED" {
		msg := "Superseded by a newer review of this task: " + newURL
		if _, _, err := rv.Client.PullRequests.DismissReview(ctx, rv.Owner, rv.Repo, rv.Number, r.GetID(),
			&gh.PullRequestReviewDismissalRequest{Message: gh.String(msg)}); err != nil {
			return fmt.Errorf("github: dismiss review %d: %w", r.GetID(), err)
		}
	}
	return nil
}

// reviewComments lists a review's comments, every page.
func (rv *Reviewer) reviewComments(ctx context.Context, id int64) ([]*gh.PullRequestComment, error) {
	var out []*gh.PullRequestComment
	opts := &gh.ListOptions{PerPage: 100}
	for {
		page, resp, err := rv.Client.PullRequests.ListReviewComments(ctx, rv.Owner, rv.Repo, rv.Number, id, opts)
		if err != nil {
			return nil, fmt.Errorf("github: list comments of review %d: %w", id, err)
		}
		out = append(out, page...)
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// apiMessage is what GitHub said in an error answer: its message and the
// messages of its errors ("Unprocessable Entity: Can not approve your own
// pull request").
func apiMessage(err error) string {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) {
		return err.Error()
	}
	parts := []string{er.Message}
	for _, e := range er.Errors {
		if e.Message != "" {
			parts = append(parts, e.Message)
		}
	}
	return strings.Join(parts, ": ")
}
