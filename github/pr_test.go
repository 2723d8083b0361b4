package github

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

func prJSON(number int, branch string) map[string]any {
	return map[string]any{"number": number, "html_url": sprintf("https://github.com/octo/hello/pull/%d", number),
		"head": map[string]any{"ref": branch}}
}

func prOptions() PROptions {
	cost := 0.0123
	return PROptions{Owner: "octo", Repo: "hello", Branch: "runner/fix-1", Base: "main", Title: "Fix the bug",
		Body: "The tests pass now.", Draft: true, Labels: []string{"runner", "automated"},
		Provenance: Provenance{Task: "fix-tests", RunURL: "https://github.com/octo/hello/actions/runs/9", Model: "gpt-4.1-mini",
			CostUSD: &cost, Checks: []CheckResult{{"tests", true}, {"lint", false}}}}
}

// TestEnsurePullRequestCreatesThenUpdates runs twice for one branch: the
// first run opens a draft pull request, the second finds and updates it.
func TestEnsurePullRequestCreatesThenUpdates(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	list := "/repos/octo/hello/pulls"
	reg.Register(http.MethodGet, list, githubtest.JSON(200, []any{})).WithQuery("head", "octo:runner/fix-1").WithQuery("state", "open")
	var created map[string]any
	reg.Register(http.MethodPost, list, githubtest.Capture(t, &created, githubtest.JSON(201, prJSON(12, "runner/fix-1"))))
	var labels []string
	reg.Register(http.MethodPost, "/repos/octo/hello/issues/12/labels", githubtest.Capture(t, &labels, githubtest.JSON(200, []any{}))).Times(2)
	reg.Register(http.MethodGet, list, githubtest.JSON(200, []any{prJSON(12, "runner/fix-1")})).WithQuery("head", "octo:runner/fix-1")
	var edited map[string]any
	reg.Register(http.MethodPatch, "/repos/octo/hello/pulls/12", githubtest.Capture(t, &edited, githubtest.JSON(200, prJSON(12, "runner/fix-1"))))

	o := prOptions()
	url, n, isNew, err := EnsurePullRequest(t.Context(), reg.Client(), o)
	if err != nil || n != 12 || !isNew || url != "https://github.com/octo/hello/pull/12" {
		t.Fatalf("first: %q %d %v %v", url, n, isNew, err)
	}
	if created["draft"] != true || created["head"] != "runner/fix-1" || created["base"] != "main" || created["title"] != "Fix the bug" {
		t.Errorf("create request = %v", created)
	}
	body, _ := created["body"].(string)
	for _, want := range []string{"The tests pass now.", "task `fix-tests`", "[run](https://github.com/octo/hello/actions/runs/9)", "model `gpt-4.1-mini`", "cost $0.0123", "✅ tests", "❌ lint"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	o.Title = "Fix the bug, again"
	url, n, isNew, err = EnsurePullRequest(t.Context(), reg.Client(), o)
	if err != nil || n != 12 || isNew || url != "https://github.com/octo/hello/pull/12" {
		t.Fatalf("second: %q %d %v %v", url, n, isNew, err)
	}
	if edited["title"] != "Fix the bug, again" || edited["body"] != body {
		t.Errorf("edit request = %v", edited)
	}
	if strings.Join(labels, ",") != "runner,automated" {
		t.Errorf("labels = %v", labels)
	}
}

func TestEnsurePullRequestRaceFallsBackToUpdate(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	list := "/repos/octo/hello/pulls"
	reg.Register(http.MethodGet, list, githubtest.JSON(200, []any{}))
	reg.Register(http.MethodPost, list, githubtest.JSON(422, map[string]any{"message": "Validation Failed",
		"errors": []any{map[string]any{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for octo:runner/fix-1."}}}))
	reg.Register(http.MethodGet, list, githubtest.JSON(200, []any{prJSON(3, "other"), prJSON(12, "runner/fix-1")}))
	reg.Register(http.MethodPatch, "/repos/octo/hello/pulls/12", githubtest.JSON(200, prJSON(12, "runner/fix-1")))
	o := prOptions()
	o.Labels = nil
	_, n, isNew, err := EnsurePullRequest(t.Context(), reg.Client(), o)
	if err != nil || n != 12 || isNew {
		t.Errorf("n=%d new=%v err=%v", n, isNew, err)
	}
}

// TestEnsurePullRequestRaceNotFound: the create says one exists, but the
// list still shows none (another head, or closed meanwhile).
func TestEnsurePullRequestRaceNotFound(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	list := "/repos/octo/hello/pulls"
	reg.Register(http.MethodGet, list, githubtest.JSON(200, []any{}))
	reg.Register(http.MethodPost, list, githubtest.JSON(422, map[string]any{"message": "Validation Failed",
		"errors": []any{map[string]any{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for octo:runner/fix-1."}}}))
	reg.Register(http.MethodGet, list, githubtest.JSON(200, []any{prJSON(3, "other")}))
	_, _, _, err := EnsurePullRequest(t.Context(), reg.Client(), prOptions())
	if err == nil || err.Error() != "github: pull request for runner/fix-1 exists but was not found" {
		t.Errorf("err = %v", err)
	}
}

func TestEnsurePullRequestOtherErrors(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	reg.Register(http.MethodGet, "/repos/octo/hello/pulls", githubtest.JSON(200, []any{}))
	reg.Register(http.MethodPost, "/repos/octo/hello/pulls", githubtest.Error(403, "GitHub Actions is not permitted to create or approve pull requests."))
	_, _, _, err := EnsurePullRequest(t.Context(), reg.Client(), prOptions())
	if err == nil || !strings.Contains(err.Error(), "not permitted") {
		t.Errorf("err = %v", err)
	}
}

func TestPRBodyFits(t *testing.T) {
	o := prOptions()
	o.Body = strings.Repeat("long line of text\n", 10000)
	b := PRBody(o)
	if utf8.RuneCountInString(b) > CommentLimit || !strings.HasSuffix(b, o.Provenance.Markdown()) {
		t.Errorf("%d runes; provenance kept: %v", utf8.RuneCountInString(b), strings.HasSuffix(b, o.Provenance.Markdown()))
	}
}
