package github

import (
	"net/http"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

// TestPullRequestRefusalSaysTheFix: GitHub's 403s on opening a pull
// request name what fixes them: the job's permissions, or the repository
// setting that lets Actions open pull requests; another failure gets no
// such hint.
func TestPullRequestRefusalSaysTheFix(t *testing.T) {
	cases := []struct {
		status      int
		message     string
		want, avoid string
	}{
		{403, "Resource not accessible by integration", "permissions: pull-requests: write", ""},
		{403, "Resource not accessible by integration", `"Allow GitHub Actions to create and approve pull requests"`, ""},
		{403, "GitHub Actions is not permitted to create or approve pull requests.", `turn on the repository setting Settings → Actions → General`, "pull-requests: write"},
		{422, "Validation Failed", "", "to fix"},
	}
	for _, c := range cases {
		reg := githubtest.New(t, "/api-v3")
		reg.Register(http.MethodGet, "/repos/octo/hello/pulls", githubtest.JSON(200, []any{}))
		reg.Register(http.MethodPost, "/repos/octo/hello/pulls", githubtest.Error(c.status, c.message))
		_, _, _, err := EnsurePullRequest(t.Context(), reg.Client(), prOptions())
		if err == nil || !strings.Contains(err.Error(), c.want) || c.avoid != "" && strings.Contains(err.Error(), c.avoid) {
			t.Errorf("%d %q: err = %v, want it to say %q (and not %q)", c.status, c.message, err, c.want, c.avoid)
		}
	}
}

// TestLabelsRefusalSaysTheFix: a 403 on labelling names the permission.
func TestLabelsRefusalSaysTheFix(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	reg.Register(http.MethodGet, "/repos/octo/hello/pulls", githubtest.JSON(200, []any{}))
	reg.Register(http.MethodPost, "/repos/octo/hello/pulls", githubtest.JSON(201, prJSON(7, "runner/fix-1")))
	reg.RegisterPrefix(http.MethodPost, "/repos/octo/hello/issues/7/labels", githubtest.Error(403, "Resource not accessible by integration"))
	o := prOptions()
	o.Labels = []string{"runner"}
	_, _, _, err := EnsurePullRequest(t.Context(), reg.Client(), o)
	if err == nil || !strings.Contains(err.Error(), "pull-requests: write") {
		t.Errorf("err = %v, want the permission named", err)
	}
}
