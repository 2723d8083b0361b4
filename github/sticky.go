package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cenkalti/backoff/v5"
	gh "github.com/google/go-github/v60/github"
)

// Sticky is the one tracking comment of a task on an issue or pull request.
// It is found again by its hidden Marker at the top of the body, on any page
// of the issue's comments, and only among comments written by Self: anyone
// can paste the marker into their own comment.
type Sticky struct {
	Client *gh.Client
	Owner  string
	Repo   string
	Number int    // issue or pull request number
	Task   string // task name; one comment per (Number, Task)
	// Self is the token identity's login; when empty it is resolved with
	// SelfLogin on first use.
	Self string
	// PerPage is the page size when listing comments (0: 100, the maximum).
	PerPage int
	// BackOff paces the retries of transient API failures (nil:
	// exponential from 1s, 3 tries in all).
	BackOff backoff.BackOff
	// Header is put right after the task's marker in every body, where
	// FitComment never cuts: hidden markers such as HistoryRef.Marker.
	// When it is empty, Update keeps the history marker the comment had.
	Header string
}

// NewSticky returns the sticky comment of task on the event's issue or pull
// request; ErrNoNumber when the event has none.
func NewSticky(client *gh.Client, ev *Event, task, self string) (*Sticky, error) {
	c := ev.GitHub
	if c.Number <= 0 {
		return nil, fmt.Errorf("%w: %s event", ErrNoNumber, c.EventName)
	}
	return &Sticky{Client: client, Owner: c.Owner, Repo: c.Repo, Number: c.Number, Task: task, Self: self}, nil
}

// Find returns the newest comment on the issue that starts with the task's
// marker and was written by Self, or nil when there is none. It reads every
// page of comments.
func (s *Sticky) Find(ctx context.Context) (*gh.IssueComment, error) {
	if err := s.resolveSelf(ctx); err != nil {
		return nil, err
	}
	marker := Marker(s.Task)
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: s.perPage()}}
	var found *gh.IssueComment
	for {
		page, resp, err := s.Client.Issues.ListComments(ctx, s.Owner, s.Repo, s.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("github: list comments of %s/%s#%d: %w", s.Owner, s.Repo, s.Number, err)
		}
		for _, c := range page {
			if strings.EqualFold(c.GetUser().GetLogin(), s.Self) &&
				strings.HasPrefix(strings.TrimSpace(c.GetBody()), marker) {
				found = c
			}
		}
		if resp.NextPage == 0 {
			return found, nil
		}
		opts.Page = resp.NextPage
	}
}

// Start posts or updates the comment to say the run is working, with a
// link to the run. It returns the comment's URL.
func (s *Sticky) Start(ctx context.Context, runURL string) (string, error) {
	body := fmt.Sprintf("⏳ **runner** is working on task `%s`…", s.Task)
	if runURL != "" {
		body += fmt.Sprintf(" [View the run](%s).", runURL)
	}
	return s.upsert(ctx, body)
}

// Finish replaces the comment's body with the report (Markdown), cut to fit
// CommentLimit with the marker and the summary kept. It returns the
// comment's URL. Calling it again with the same report is harmless.
func (s *Sticky) Finish(ctx context.Context, report string) (string, error) {
	return s.upsert(ctx, report)
}

// Update replaces the body of the existing comment only; found is false
// (and nothing is posted) when there is none.
func (s *Sticky) Update(ctx context.Context, content string) (url string, found bool, err error) {
	existing, err := s.Find(ctx)
	if err != nil || existing == nil {
		return "", false, err
	}
	if ref, ok := FindHistoryRef(existing.GetBody()); ok && s.Header == "" {
		s.Header = ref.Marker() // a cancelled run's report keeps the way to the last history
	}
	url, err = s.edit(ctx, existing, s.Body(content))
	return url, true, err
}

// Body is the full comment body for content: marker first, then the
// Header, then content (its runner markers made inert: only the marker
// and the Header count), fit to CommentLimit.
func (s *Sticky) Body(content string) string {
	head := Marker(s.Task) + "\n"
	if s.Header != "" {
		head += s.Header + "\n"
	}
	return FitComment(head+InertMarkers(content), CommentLimit)
}

// upsert edits the comment or posts it; it is retried as a whole on
// transient failures, finding the comment again each time, so a post that
// failed after all is not repeated once it shows in the list.
func (s *Sticky) upsert(ctx context.Context, content string) (string, error) {
	return retryAPI(ctx, s.BackOff, func() (string, error) { return s.upsertOnce(ctx, content) })
}

func (s *Sticky) upsertOnce(ctx context.Context, content string) (string, error) {
	body := s.Body(content)
	existing, err := s.Find(ctx)
	if err != nil {
		return "", err
	}
	if existing != nil {
		url, err := s.edit(ctx, existing, body)
		if !isStatus(err, http.StatusNotFound) { // deleted meanwhile: post anew
			return url, err
		}
	}
	c, _, err := s.Client.Issues.CreateComment(ctx, s.Owner, s.Repo, s.Number, &gh.IssueComment{Body: &body})
	if err != nil {
		return "", fmt.Errorf("github: comment on %s/%s#%d: %w", s.Owner, s.Repo, s.Number, err)
	}
	return c.GetHTMLURL(), nil
}

// edit sets the comment's body unless it already is body.
func (s *Sticky) edit(ctx context.Context, existing *gh.IssueComment, body string) (string, error) {
	if have := existing.GetBody(); have == body || have == postedForm(s.Client, body) {
		return existing.GetHTMLURL(), nil
	}
	c, _, err := s.Client.Issues.EditComment(ctx, s.Owner, s.Repo, existing.GetID(), &gh.IssueComment{Body: &body})
	if err != nil {
		return "", fmt.Errorf("github: edit comment %d: %w", existing.GetID(), err)
	}
	return c.GetHTMLURL(), nil
}

func (s *Sticky) resolveSelf(ctx context.Context) error {
	if s.Self != "" {
		return nil
	}
	self, err := SelfLogin(ctx, s.Client)
	if err != nil {
		return err
	}
	s.Self = self
	return nil
}

func (s *Sticky) perPage() int {
	if s.PerPage > 0 {
		return s.PerPage
	}
	return 100
}

// isStatus reports whether err is a GitHub API error with the HTTP status.
func isStatus(err error, status int) bool {
	var er *gh.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == status
}
