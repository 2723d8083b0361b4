package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cenkalti/backoff/v5"
	gh "github.com/google/go-github/v60/github"
	"github.com/seed43ef5acb/runner/runner/event"
)

// PROptions describe the pull request EnsurePullRequest creates or updates.
type PROptions struct {
	Owner, Repo string
	Branch      string // head branch, in Owner/Repo
	Base        string // base branch
	Title       string
	Body        string // Markdown; the provenance block is appended
	Draft       bool   // for a new pull request (an existing one keeps its state)
	Labels      []string
	Provenance  Provenance
	// BackOff paces the retries of transient API failures (nil:
	// exponential from 1s, 3 tries in all).
	BackOff backoff.BackOff
}

// Provenance says where a pull request came from.
type Provenance struct {
	Task    string
	RunURL  string
	Model   string
	CostUSD *float64 // nil: unknown
	Checks  []CheckResult
	// History, when set, says where the run left its history (a task
	// with github.continue), so a comment on the pull request continues it.
	History *HistoryRef
}

// CheckResult is one check command's outcome for the provenance block.
type CheckResult struct {
	Name   string
	Passed bool
}

// Markdown renders the provenance block, starting with the hidden
// markers: PRMarker of the task (the pull request was opened by the
// runner for it) and the history reference when there is one.
func (p Provenance) Markdown() string {
	var b strings.Builder
	if p.Task != "" {
		b.WriteString(PRMarker(p.Task) + "\n")
	}
	if p.History != nil && p.History.Valid() {
		b.WriteString(p.History.Marker() + "\n")
	}
	b.WriteString("---\n<sub>Opened by **runner**")
	if p.Task != "" {
		fmt.Fprintf(&b, " · task `%s`", p.Task)
	}
	if p.RunURL != "" {
		fmt.Fprintf(&b, " · [run](%s)", p.RunURL)
	}
	if p.Model != "" {
		fmt.Fprintf(&b, " · model `%s`", p.Model)
	}
	if p.CostUSD != nil {
		fmt.Fprintf(&b, " · cost %s", event.FormatCost(*p.CostUSD))
	}
	if len(p.Checks) > 0 {
		parts := make([]string, len(p.Checks))
		for i, c := range p.Checks {
			mark := "✅"
			if !c.Passed {
				mark = "❌"
			}
			parts[i] = mark + " " + c.Name
		}
		fmt.Fprintf(&b, " · checks: %s", strings.Join(parts, ", "))
	}
	b.WriteString("</sub>\n")
	return b.String()
}

// PRBody is the pull request body: the body (its runner markers made
// inert: only the provenance block's count), then the provenance block,
// cut to CommentLimit with the provenance kept.
func PRBody(o PROptions) string {
	prov := "\n\n" + o.Provenance.Markdown()
	room := CommentLimit - len([]rune(prov))
	return FitComment(InertMarkers(o.Body), room) + prov
}

// EnsurePullRequest opens a pull request from Branch into Base, or updates
// the title and body of the open one for that branch (listed with
// head=owner:branch), and adds the labels. A create that loses a race ("A
// pull request already exists") falls back to the update. It returns the
// pull request's URL and number, and whether it was created.
func EnsurePullRequest(ctx context.Context, client *gh.Client, o PROptions) (url string, number int, created bool, err error) {
	if err := ValidateBranch(o.Branch); err != nil {
		return "", 0, false, err
	}
	type result struct {
		url     string
		number  int
		created bool
	}
	var wasCreated bool // a try that created it, then failed, still created it
	r, err := retryAPI(ctx, o.BackOff, func() (result, error) {
		u, n, c, err := ensureOnce(ctx, client, o)
		wasCreated = wasCreated || c
		return result{u, n, wasCreated}, err
	})
	switch {
	case errors.Is(err, ErrLabels):
		err = withPermissionHint(callLabels, err)
	case err != nil:
		err = withPermissionHint(callPullRequest, mark(ErrPullRequest, err))
	}
	return r.url, r.number, r.created, err
}

func ensureOnce(ctx context.Context, client *gh.Client, o PROptions) (url string, number int, created bool, err error) {
	body := PRBody(o)
	pr, err := findPullRequest(ctx, client, o)
	if err != nil {
		return "", 0, false, err
	}
	if pr == nil {
		pr, err = createPullRequest(ctx, client, o, body)
		if err != nil {
			return "", 0, false, err
		}
		created = pr != nil
		if pr == nil { // already exists: opened concurrently
			if pr, err = findPullRequest(ctx, client, o); err != nil {
				return "", 0, false, err
			}
			if pr == nil {
				return "", 0, false, fmt.Errorf("github: pull request for %s exists but was not found", o.Branch)
			}
		}
	}
	if !created {
		edit := &gh.PullRequest{Title: gh.String(o.Title), Body: gh.String(body)}
		if pr, _, err = client.PullRequests.Edit(ctx, o.Owner, o.Repo, pr.GetNumber(), edit); err != nil {
			return "", 0, false, fmt.Errorf("github: update pull request: %w", err)
		}
	}
	if len(o.Labels) > 0 {
		if _, _, err := client.Issues.AddLabelsToIssue(ctx, o.Owner, o.Repo, pr.GetNumber(), o.Labels); err != nil {
			return pr.GetHTMLURL(), pr.GetNumber(), created, mark(ErrLabels, fmt.Errorf("github: label pull request #%d: %w", pr.GetNumber(), err))
		}
	}
	return pr.GetHTMLURL(), pr.GetNumber(), created, nil
}

func findPullRequest(ctx context.Context, client *gh.Client, o PROptions) (*gh.PullRequest, error) {
	opts := &gh.PullRequestListOptions{State: "open", Head: o.Owner + ":" + o.Branch, ListOptions: gh.ListOptions{PerPage: 100}}
	prs, _, err := client.PullRequests.List(ctx, o.Owner, o.Repo, opts)
	if err != nil {
		return nil, fmt.Errorf("github: list pull requests for %s: %w", o.Branch, err)
	}
	for _, pr := range prs {
		if pr.GetHead().GetRef() == o.Branch {
			return pr, nil
		}
	}
	return nil, nil
}

// createPullRequest returns nil, nil when one already exists for the head.
func createPullRequest(ctx context.Context, client *gh.Client, o PROptions, body string) (*gh.PullRequest, error) {
	pr, _, err := client.PullRequests.Create(ctx, o.Owner, o.Repo, &gh.NewPullRequest{
		Title: gh.String(o.Title), Head: gh.String(o.Branch), Base: gh.String(o.Base),
		Body: gh.String(body), Draft: gh.Bool(o.Draft), MaintainerCanModify: gh.Bool(true),
	})
	if err == nil {
		return pr, nil
	}
	if isStatus(err, http.StatusUnprocessableEntity) && strings.Contains(err.Error(), "already exists") {
		return nil, nil
	}
	return nil, fmt.Errorf("github: create pull request %s → %s: %w", o.Branch, o.Base, err)
}
