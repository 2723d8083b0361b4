package github

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// Event is the template data a prompt sees in Actions: {{ .Event.issue.title }}
// reads the raw payload, {{ .GitHub.Number }} the resolved context.
type Event struct {
	// Event is the decoded payload (numbers are json.Number, so ids print
	// exactly).
	Event map[string]any
	// GitHub is what the runner resolved from the payload, the environment
	// and, for a comment on a pull request, the Pulls API.
	GitHub Context
	// PullRequest is the pull request a comment is on, as the Pulls API
	// gave it (ResolvePullRequest, for an issue_comment) or the payload
	// of a pull_request_review_comment carries it; nil otherwise: who
	// opened it and its body, where a pull request the runner opened has
	// its markers.
	PullRequest *PullRequestInfo
	// CommentOn is where a pull_request_review_comment was made, as
	// "path:line" (or "path:start-line" for a range, "path" for a file
	// comment); "" for other events.
	CommentOn string
}

// CommentPrompt is the triggering comment as a prompt: its body, after
// the file and line of a review comment (a comment on a line of the diff
// means that line).
func (ev *Event) CommentPrompt() string {
	if ev.CommentOn == "" {
		return ev.GitHub.CommentBody
	}
	return fmt.Sprintf("Review comment on %s:\n\n%s", ev.CommentOn, ev.GitHub.CommentBody)
}

// PullRequestInfo is what the runner reads of a pull request beyond the
// Context: its author's login, its body and its web URL.
type PullRequestInfo struct {
	Author  string
	Body    string
	HTMLURL string
}

// Context is the resolved, typed part of an event. Number is the pull
// request or issue number (0 for push, schedule, workflow_dispatch).
type Context struct {
	EventName     string
	Action        string // payload "action" ("" for push, schedule, dispatch)
	Repository    string // owner/repo
	Owner         string
	Repo          string
	SHA           string // GITHUB_SHA (for pull_request: the merge commit)
	Ref           string // GITHUB_REF
	Actor         string // GITHUB_ACTOR, else the payload sender
	ActorType     string // sender.type (User, Bot, Organization) when the sender is the actor
	RunURL        string
	Number        int
	IsPR          bool
	Title         string // issue or pull request title
	CommentBody   string
	CommentID     int64
	CommentAuthor string
	HeadRef       string // PR head branch
	HeadSHA       string // PR head commit
	HeadRepo      string // PR head repository owner/repo (differs for forks)
	BaseRef       string // PR base branch
}

// Events whose payload names a pull request, and those gated on the actor.
const (
	EventPullRequest        = "pull_request"
	EventPullRequestTarget  = "pull_request_target"
	EventPullRequestReview  = "pull_request_review"
	EventReviewComment      = "pull_request_review_comment"
	EventIssueComment       = "issue_comment"
	EventIssues             = "issues"
	EventPush               = "push"
	EventSchedule           = "schedule"
	EventWorkflowDispatch   = "workflow_dispatch"
	EventRepositoryDispatch = "repository_dispatch"
	EventMergeGroup         = "merge_group"
	EventWorkflowCall       = "workflow_call"
	EventWorkflowRun        = "workflow_run"
	EventDiscussion         = "discussion"
	EventDiscussionComment  = "discussion_comment"
)

type userPayload struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

type prPayload struct {
	Number  int         `json:"number"`
	Title   string      `json:"title"`
	Head    refPay      `json:"head"`
	Base    refPay      `json:"base"`
	User    userPayload `json:"user"`
	Body    string      `json:"body"`
	HTMLURL string      `json:"html_url"`
}

type refPay struct {
	Ref  string `json:"ref"`
	SHA  string `json:"sha"`
	Repo *struct {
		FullName string `json:"full_name"`
	} `json:"repo"`
}

type eventPayload struct {
	Action     string `json:"action"`
	Ref        string `json:"ref"`
	After      string `json:"after"`
	Repository *struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	Sender *userPayload `json:"sender"`
	Issue  *struct {
		Number      int             `json:"number"`
		Title       string          `json:"title"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	PullRequest *prPayload `json:"pull_request"`
	Discussion  *struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
	} `json:"discussion"`
	Review  *commentPayload `json:"review"`
	Comment *commentPayload `json:"comment"`
}

// commentPayload is a comment or a review: both have an id, a body and an
// author.
type commentPayload struct {
	ID   int64       `json:"id"`
	Body string      `json:"body"`
	User userPayload `json:"user"`
	// A review comment's place in the diff (pull_request_review_comment).
	Path      string `json:"path"`
	Line      int    `json:"line"`
	StartLine int    `json:"start_line"`
}

// location is a review comment's "path:line", "path:start-line" or
// "path" ("" without a path).
func (cm *commentPayload) location() string {
	switch {
	case cm.Path == "":
		return ""
	case cm.Line <= 0:
		return cm.Path
	case cm.StartLine > 0 && cm.StartLine < cm.Line:
		return fmt.Sprintf("%s:%d-%d", cm.Path, cm.StartLine, cm.Line)
	}
	return fmt.Sprintf("%s:%d", cm.Path, cm.Line)
}

func (cm *commentPayload) fill(c *Context) {
	c.CommentID, c.CommentBody, c.CommentAuthor = cm.ID, cm.Body, cm.User.Login
}

// needComment fills c from the payload's comment, which event name requires.
func needComment(name string, p *eventPayload, c *Context) error {
	if p.Comment == nil {
		return fmt.Errorf("%w: %s payload has no comment", ErrEvent, name)
	}
	p.Comment.fill(c)
	return nil
}

// LoadEvent decodes an event payload (the file named by GITHUB_EVENT_PATH)
// for the event name (GITHUB_EVENT_NAME). It fills what the payload alone
// tells; ApplyEnv adds the environment and ResolvePullRequest the head of a
// pull request commented on. Errors wrap ErrEvent and say which key is
// missing or malformed.
func LoadEvent(name string, payload []byte) (*Event, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: empty event name", ErrEvent)
	}
	payload = bytes.TrimPrefix(payload, []byte("\ufeff")) // a byte order mark an editor added
	raw, err := decodeObject(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %s payload %w", ErrEvent, name, err)
	}
	var p eventPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("%w: %s payload: %s is a JSON %s, want %s", ErrEvent, name, te.Field, te.Value, jsonKind(te.Type))
		}
		return nil, fmt.Errorf("%w: %s payload: %w", ErrEvent, name, err)
	}
	ev := &Event{Event: raw, GitHub: Context{EventName: name, Action: p.Action}}
	c := &ev.GitHub
	if p.Repository != nil {
		c.Repository = p.Repository.FullName
		c.Owner, c.Repo, _ = strings.Cut(c.Repository, "/")
	}
	if p.Sender != nil {
		c.Actor, c.ActorType = p.Sender.Login, p.Sender.Type
	}
	if err := fillKind(name, &p, c); err != nil {
		return nil, err
	}
	if name == EventReviewComment {
		// The payload carries the whole pull request (its head too, so
		// ResolvePullRequest fetches nothing): who opened it and its body,
		// as the continue flow reads them.
		pr := p.PullRequest
		ev.PullRequest = &PullRequestInfo{Author: pr.User.Login, Body: pr.Body, HTMLURL: pr.HTMLURL}
		ev.CommentOn = p.Comment.location()
	}
	return ev, nil
}

// decodeObject decodes one JSON object, numbers as json.Number; its
// error completes "payload …" (is empty, is not a JSON object, …).
func decodeObject(payload []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(payload)) == 0 {
		return nil, errors.New("is empty")
	}
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return nil, fmt.Errorf("is a JSON %s, not an object", te.Value)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, errors.New("is cut short: its JSON object does not end")
		}
		return nil, fmt.Errorf("is not a JSON object: %w", err)
	}
	if raw == nil {
		return nil, errors.New("is null, not a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("has more after its JSON object (at byte %d)", dec.InputOffset())
	}
	return raw, nil
}

// jsonKind names a Go type as the JSON it decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

// fillKind reads the event-specific keys.
func fillKind(name string, p *eventPayload, c *Context) error {
	switch name {
	case EventPullRequest, EventPullRequestTarget, EventPullRequestReview, EventReviewComment:
		if p.PullRequest == nil || p.PullRequest.Number <= 0 {
			return fmt.Errorf("%w: %s payload has no pull_request.number", ErrEvent, name)
		}
		fillPR(c, p.PullRequest)
		if name == EventPullRequestReview && p.Review != nil { // the review's text is the "comment"
			p.Review.fill(c)
		}
		if name == EventReviewComment {
			return needComment(name, p, c)
		}
	case EventIssueComment, EventIssues:
		if p.Issue == nil || p.Issue.Number <= 0 {
			return fmt.Errorf("%w: %s payload has no issue.number", ErrEvent, name)
		}
		c.Number, c.Title = p.Issue.Number, p.Issue.Title
		pr := bytes.TrimSpace(p.Issue.PullRequest)
		c.IsPR = len(pr) > 0 && !bytes.Equal(pr, []byte("null"))
		if name == EventIssueComment {
			return needComment(name, p, c)
		}
	case EventDiscussion, EventDiscussionComment:
		if p.Discussion == nil || p.Discussion.Number <= 0 {
			return fmt.Errorf("%w: %s payload has no discussion.number", ErrEvent, name)
		}
		c.Title = p.Discussion.Title // Number stays 0: a discussion is no issue to comment on
		if name == EventDiscussionComment {
			return needComment(name, p, c)
		}
	case EventPush:
		c.Ref, c.SHA = p.Ref, p.After
	case EventWorkflowDispatch:
		c.Ref = p.Ref
	}
	return nil
}

func fillPR(c *Context, pr *prPayload) {
	c.Number, c.IsPR, c.Title = pr.Number, true, pr.Title
	c.HeadRef, c.HeadSHA, c.BaseRef = pr.Head.Ref, pr.Head.SHA, pr.Base.Ref
	if pr.Head.Repo != nil {
		c.HeadRepo = pr.Head.Repo.FullName
	}
}

// ApplyEnv adds the step's environment: repository, SHA, ref and actor from
// GITHUB_* (they win over the payload), and the run URL.
func (ev *Event) ApplyEnv(e *Env) {
	c := &ev.GitHub
	if e.Repository != "" {
		c.Repository, c.Owner, c.Repo = e.Repository, e.Owner, e.Repo
	}
	c.SHA = cmp.Or(e.SHA, c.SHA)
	c.Ref = cmp.Or(e.Ref, c.Ref)
	if e.Actor != "" && !strings.EqualFold(e.Actor, c.Actor) {
		c.Actor, c.ActorType = e.Actor, "" // the sender's type is not the actor's
	}
	c.RunURL = e.RunURL()
	if c.HeadRef == "" && c.IsPR {
		c.HeadRef, c.BaseRef = e.HeadRef, cmp.Or(c.BaseRef, e.BaseRef)
	}
}

// ResolvePullRequest fetches the pull request when the payload lacks its
// head (an issue_comment on a pull request carries no head SHA or ref) and
// fills HeadRef, HeadSHA, HeadRepo and BaseRef. It does nothing for events
// that are not about a pull request or already carry the head.
func ResolvePullRequest(ctx context.Context, client *gh.Client, ev *Event) error {
	c := &ev.GitHub
	if !c.IsPR || c.HeadSHA != "" {
		return nil
	}
	pr, _, err := client.PullRequests.Get(ctx, c.Owner, c.Repo, c.Number)
	if err != nil {
		return fmt.Errorf("github: get pull request %s#%d: %w", c.Repository, c.Number, err)
	}
	c.HeadRef, c.HeadSHA = pr.GetHead().GetRef(), pr.GetHead().GetSHA()
	c.HeadRepo = pr.GetHead().GetRepo().GetFullName()
	c.BaseRef = pr.GetBase().GetRef()
	ev.PullRequest = &PullRequestInfo{Author: pr.GetUser().GetLogin(), Body: pr.GetBody(), HTMLURL: pr.GetHTMLURL()}
	return nil
}

// Load reads the event of an Actions step: the payload at GITHUB_EVENT_PATH
// for GITHUB_EVENT_NAME, with the environment applied and, when client is
// not nil, the pull request resolved.
func Load(ctx context.Context, e *Env, client *gh.Client) (*Event, error) {
	if e.EventPath == "" {
		return nil, fmt.Errorf("%w: GITHUB_EVENT_PATH is not set", ErrEnv)
	}
	data, err := os.ReadFile(e.EventPath)
	if err != nil {
		return nil, fmt.Errorf("github: read event: %w", err)
	}
	ev, err := LoadEvent(e.EventName, data)
	if err != nil {
		return nil, fmt.Errorf("%s (GITHUB_EVENT_PATH): %w; it must be the event's JSON as Actions wrote it", e.EventPath, err)
	}
	ev.ApplyEnv(e)
	if client != nil {
		if err := ResolvePullRequest(ctx, client, ev); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// Map returns the context as a map keyed by field name ("Number",
// "HeadSHA", …) for template data that holds maps (spec.TemplateData):
// {{ .GitHub.Number }} reads the same either way.
func (c Context) Map() map[string]any {
	v := reflect.ValueOf(c)
	m := make(map[string]any, v.NumField())
	for i := range v.NumField() {
		m[v.Type().Field(i).Name] = v.Field(i).Interface()
	}
	return m
}
