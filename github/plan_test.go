package github

import (
	"errors"
	"slices"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
)

// TestPlanPullRequest: the one plan of exec and batch pull requests: the
// task's block wins, else the default branch, title, body, draft and
// labels of the request; the commit author defaults to runner.
func TestPlanPullRequest(t *testing.T) {
	files := []event.FileChange{{Path: "b.go", OldPath: "a.go", Status: event.ChangeRenamed}, {Path: "c.go"}}
	req := PRRequest{Task: "fix", Body: "report", Draft: true, Labels: []string{"bot"}, Files: files,
		BranchData: BranchData{Number: 7, Kind: "issue", RunID: "r1"}}
	p, err := PlanPullRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if p.Branch != "runner/fix/issue-7" || p.Title != "runner: fix" || p.Body != "report" || !p.Draft ||
		!slices.Equal(p.Labels, []string{"bot"}) || p.AuthorName != DefaultAuthorName || p.AuthorEmail != DefaultAuthorEmail ||
		!slices.Equal(p.Paths, []string{"b.go", "a.go", "c.go"}) {
		t.Errorf("default plan = %+v", p)
	}
	req.Spec = &PRTexts{Branch: "fix/x", Title: "Fix x", Labels: []string{"auto"}}
	req.AuthorName, req.AuthorEmail = ActionsAuthorName, ActionsAuthorEmail
	p, err = PlanPullRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if p.Branch != "fix/x" || p.Title != "Fix x" || p.Body != "report" || p.Draft ||
		!slices.Equal(p.Labels, []string{"auto"}) || p.AuthorName != ActionsAuthorName {
		t.Errorf("spec plan = %+v", p)
	}
	if push := p.Push("/r", "abc", "/w"); push.Branch != "fix/x" || push.Message != "Fix x" || push.BaseCommit != "abc" ||
		push.WorkTree != "/w" || len(push.Paths) != 3 {
		t.Errorf("push options = %+v", push)
	}
	if pr := p.PR("o", "r", "main"); pr.Branch != "fix/x" || pr.Base != "main" || pr.Owner != "o" || pr.Body != "report" {
		t.Errorf("pull request options = %+v", pr)
	}
	if _, err := PlanPullRequest(PRRequest{Task: "fix"}); !errors.Is(err, ErrNoChanges) {
		t.Errorf("plan without files: %v, want ErrNoChanges", err)
	}
}
