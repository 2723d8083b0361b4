package github

import (
	"errors"
	"net/http"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

// TestReviewerOfEvents: which real event payloads name a pull request to
// review (testdata/events, the cases' payloads). A comment on a pull
// request carries no head: the Pulls API gives it. Events with none
// (a plain issue, push, schedule, dispatch) are ErrNoNumber until --pr
// names one (UsePullRequest).
func TestReviewerOfEvents(t *testing.T) {
	const headSHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	tests := []struct {
		file, name string
		number     int
		resolve    bool // the head comes from the Pulls API
	}{
		{"pull_request.opened.json", EventPullRequest, 2, false},
		{"pull_request.synchronize.json", EventPullRequest, 2, false},
		{"pull_request_review_comment.created.json", EventReviewComment, 2, false},
		{"issue_comment.created.pull_request.json", EventIssueComment, 0, true},
		{"issue_comment.created.issue.json", EventIssueComment, 0, false},
		{"issues.opened.json", EventIssues, 0, false},
		{"push.json", EventPush, 0, false},
		{"schedule.json", EventSchedule, 0, false},
		{"workflow_dispatch.json", EventWorkflowDispatch, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ev, err := LoadEvent(tt.name, readEvent(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			reg := githubtest.New(t, "/api/v3")
			c := ev.GitHub
			if tt.resolve {
				reg.Register(http.MethodGet, "/repos/"+c.Repository+"/pulls/"+itoa(c.Number), githubtest.JSON(200, map[string]any{
					"number": c.Number, "head": map[string]any{"ref": "f", "sha": headSHA, "repo": map[string]any{"full_name": c.Repository}},
					"base": map[string]any{"ref": "main"}}))
				if err := ResolvePullRequest(t.Context(), reg.Client(), ev); err != nil {
					t.Fatal(err)
				}
			}
			a := &Actions{Client: reg.Client(), Event: ev, Self: botLogin}
			rv, err := a.Reviewer(t.Context())
			wantPR := tt.number > 0 || tt.resolve
			switch {
			case !wantPR && !errors.Is(err, ErrNoNumber):
				t.Fatalf("reviewer %+v, %v; want ErrNoNumber", rv, err)
			case !wantPR:
				return
			case err != nil:
				t.Fatal(err)
			case rv.Number != ev.GitHub.Number || rv.Owner+"/"+rv.Repo != ev.GitHub.Repository || ev.GitHub.HeadSHA != headSHA:
				t.Errorf("reviewer %+v for %+v", rv, ev.GitHub)
			}
		})
	}
}

// TestUsePullRequest: --pr N on a workflow_dispatch event makes that pull
// request the run's, head and title from the Pulls API; without a token
// only its number.
func TestUsePullRequest(t *testing.T) {
	ev, err := LoadEvent(EventWorkflowDispatch, readEvent(t, "workflow_dispatch.json"))
	if err != nil {
		t.Fatal(err)
	}
	reg := githubtest.New(t, "/api/v3")
	c := ev.GitHub
	reg.Register(http.MethodGet, "/repos/"+c.Repository+"/pulls/9", githubtest.JSON(200, map[string]any{
		"number": 9, "title": "Fix it", "head": map[string]any{"ref": "fix", "sha": headSHA, "repo": map[string]any{"full_name": "fork/x"}},
		"base": map[string]any{"ref": "main"}}))
	a := &Actions{Client: reg.Client(), Event: ev, Self: botLogin}
	if err := a.UsePullRequest(t.Context(), 9); err != nil {
		t.Fatal(err)
	}
	got := a.Event.GitHub
	if got.Number != 9 || !got.IsPR || got.Title != "Fix it" || got.HeadSHA != headSHA || got.HeadRepo != "fork/x" || got.BaseRef != "main" {
		t.Errorf("context %+v", got)
	}
	offline := &Actions{Event: &Event{GitHub: c}}
	if err := offline.UsePullRequest(t.Context(), 9); err != nil || offline.Event.GitHub.Number != 9 || offline.Event.GitHub.HeadSHA != "" {
		t.Errorf("without a token: %+v, %v", offline.Event.GitHub, err)
	}
	if err := a.UsePullRequest(t.Context(), 0); !errors.Is(err, ErrEvent) {
		t.Errorf("--pr 0: %v", err)
	}
}
