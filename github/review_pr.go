package github

import (
	"context"
	"fmt"
)

// UsePullRequest makes pull request number the run's subject (`runner
// exec --pr N`, for an event that names none, such as workflow_dispatch or
// schedule, or another than the event's): the context's Number, IsPR,
// Title and head and base are those of the pull request, read from the
// Pulls API. Without a token only Number and IsPR are set (no API call is
// made; nothing is posted either).
func (a *Actions) UsePullRequest(ctx context.Context, number int) error {
	if number <= 0 {
		return fmt.Errorf("%w: pull request number %d", ErrEvent, number)
	}
	c := &a.Event.GitHub
	if c.Number == number && c.IsPR && c.HeadSHA != "" {
		return nil
	}
	c.Number, c.IsPR = number, true
	c.Title, c.HeadRef, c.HeadSHA, c.HeadRepo, c.BaseRef = "", "", "", "", ""
	if a.Client == nil {
		return nil
	}
	pr, _, err := a.Client.PullRequests.Get(ctx, c.Owner, c.Repo, number)
	if err != nil {
		return fmt.Errorf("github: get pull request %s#%d: %w", c.Repository, number, err)
	}
	c.Title = pr.GetTitle()
	c.HeadRef, c.HeadSHA = pr.GetHead().GetRef(), pr.GetHead().GetSHA()
	c.HeadRepo, c.BaseRef = pr.GetHead().GetRepo().GetFullName(), pr.GetBase().GetRef()
	return nil
}

// Reviewer returns the reviewer of the run's pull request with the
// token's identity; ErrNoToken without a token, ErrNoNumber when the run
// has no pull request.
func (a *Actions) Reviewer(ctx context.Context) (*Reviewer, error) {
	c := a.Event.GitHub
	if !c.IsPR || c.Number <= 0 {
		return nil, fmt.Errorf("%w: %s event names no pull request", ErrNoNumber, c.EventName)
	}
	self, err := a.SelfLogin(ctx)
	if err != nil {
		return nil, err
	}
	return &Reviewer{Client: a.Client, Owner: c.Owner, Repo: c.Repo, Number: c.Number, Self: self}, nil
}
