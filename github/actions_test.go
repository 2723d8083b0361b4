package github

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

const prRepo = "/repos/sample-commenter/github-workflow-event-json"

func TestSetupOutsideActions(t *testing.T) {
	a, err := Setup(t.Context(), map[string]string{"GITHUB_REPOSITORY": "o/r"}, nil)
	if a != nil || err != nil {
		t.Errorf("a=%v err=%v", a, err)
	}
}

// TestActionsCommentToPullRequest is the issue-comment flow end to end: the
// event is loaded and its pull request resolved, the gate passes a writer,
// the sticky comment is started, and two runs push the branch and open,
// then update, the same pull request.
func TestActionsCommentToPullRequest(t *testing.T) {
	t.Parallel()
	reg := githubtest.New(t, "/api/v3")
	reg.Register(http.MethodGet, prRepo+"/pulls/3", githubtest.JSON(200, map[string]any{"number": 3,
		"head": map[string]any{"ref": "feature", "sha": "abc"}, "base": map[string]any{"ref": "main"}}))
	reg.Register(http.MethodGet, "/user", githubtest.Error(403, "Resource not accessible by integration"))
	reg.Register(http.MethodGet, prRepo+"/collaborators/sample-commenter/permission", githubtest.JSON(200, map[string]any{"permission": "write", "role_name": "maintain"}))
	reg.Register(http.MethodGet, prRepo+"/issues/3/comments", githubtest.Page([]any{}, 1, 1))
	reg.Register(http.MethodPost, prRepo+"/issues/3/comments", githubtest.JSON(201, map[string]any{"id": 1, "html_url": "https://c/1"}))
	reg.Register(http.MethodGet, prRepo+"/pulls", githubtest.JSON(200, []any{})).WithQuery("head", "sample-commenter:runner/fix/pr-3")
	reg.Register(http.MethodPost, prRepo+"/pulls", githubtest.JSON(201, prJSON(4, "runner/fix/pr-3")))
	reg.Register(http.MethodGet, prRepo+"/pulls", githubtest.JSON(200, []any{prJSON(4, "runner/fix/pr-3")}))
	reg.Register(http.MethodPatch, prRepo+"/pulls/4", githubtest.JSON(200, prJSON(4, "runner/fix/pr-3")))

	environ := eventEnv(t, "issue_comment", "issue_comment.created.pull_request.json", reg.Server.URL)
	environ["GITHUB_ACTIONS"], environ["GITHUB_TOKEN"] = "true", "tok"
	a, err := Setup(t.Context(), environ, reg.Server.Client())
	if err != nil {
		t.Fatal(err)
	}
	if a.Event.GitHub.HeadRef != "feature" || a.Event.GitHub.RunURL != reg.Server.URL+"/sample-commenter/github-workflow-event-json/actions/runs/5" {
		t.Errorf("context = %+v", a.Event.GitHub)
	}
	d, err := a.Gate(t.Context(), "", "renovate, dependabot", "")
	if err != nil || !d.Run || a.Self != ActionsBotLogin {
		t.Fatalf("gate = %+v, %v (self %q)", d, err, a.Self)
	}
	s, err := a.Sticky(t.Context(), "fix")
	if err != nil {
		t.Fatal(err)
	}
	if url, err := s.Start(t.Context(), a.Event.GitHub.RunURL); err != nil || url != "https://c/1" {
		t.Fatalf("start: %q %v", url, err)
	}

	work, remote, base := seed(t)
	branch, err := BranchName("", NewBranchData("fix", a.Event, a.Env.RunID, base))
	if err != nil {
		t.Fatal(err)
	}
	for i, content := range []string{"first\n", "second\n"} {
		writeFiles(t, work, map[string]string{"a.txt": content})
		push := PushOptions{RepoDir: work, BaseCommit: base, WorkTree: work, Paths: []string{"a.txt"}, Branch: branch, RemoteURL: remote, Message: "fix"}
		_, n, created, err := a.PublishPullRequest(t.Context(), push, PROptions{Base: "main", Title: "Fix", Body: "b"})
		if err != nil || n != 4 || created != (i == 0) {
			t.Fatalf("run %d: n=%d created=%v err=%v", i, n, created, err)
		}
		if got, _ := branchTree(t, remote, branch); got["a.txt"].Content != content {
			t.Errorf("run %d: branch has %q", i, got["a.txt"].Content)
		}
	}
}

func TestPublishPullRequestNeedsBaseBeforePushing(t *testing.T) {
	work, remote, base := seed(t)
	writeFiles(t, work, map[string]string{"a.txt": "changed\n"})
	a := &Actions{Env: &Env{Owner: "octo", Repo: "hello"}}
	push := PushOptions{RepoDir: work, BaseCommit: base, WorkTree: work, Paths: []string{"a.txt"}, Branch: "runner/x", RemoteURL: remote, Message: "m"}
	_, _, _, err := a.PublishPullRequest(t.Context(), push, PROptions{Title: "t"})
	if err == nil || !strings.Contains(err.Error(), "no base branch") {
		t.Fatalf("err = %v", err)
	}
	repo, err := git.PlainOpen(remote)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Reference(plumbing.NewBranchReferenceName("runner/x"), true); err == nil {
		t.Error("the branch was pushed although no pull request can be opened")
	}
}

func TestSetupSelfLoginOverride(t *testing.T) {
	environ := eventEnv(t, "schedule", "schedule.json", "")
	environ["GITHUB_ACTIONS"], environ["RUNNER_GITHUB_LOGIN"] = "true", "my-app[bot]"
	a, err := Setup(t.Context(), environ, nil)
	if err != nil {
		t.Fatal(err)
	}
	if self, err := a.SelfLogin(t.Context()); err != nil || self != "my-app[bot]" { // no API call
		t.Errorf("self = %q, %v", self, err)
	}
}

func TestSplitList(t *testing.T) {
	if got := SplitList(" a, b\nc,,\r\n"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("got %q", got)
	}
}

func TestSetupBadEvent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "e.json")
	if err := os.WriteFile(p, []byte(`{"issue":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Setup(t.Context(), map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": p}, nil)
	if err == nil || !strings.Contains(err.Error(), "issue.number") || !strings.Contains(err.Error(), p) {
		t.Errorf("err = %v", err)
	}
}
