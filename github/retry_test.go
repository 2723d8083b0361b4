package github

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/cenkalti/backoff/v5"
	"github.com/seed43ef5acb/runner/github/githubtest"
)

func TestStickyRetriesTransientFailures(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{}, 1, 1)).Times(3)
	reg.Register(http.MethodPost, commentsPath, githubtest.Error(502, "Server Error"))
	reg.Register(http.MethodPost, commentsPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		githubtest.JSON(403, map[string]any{"message": "You have exceeded a secondary rate limit.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"})(w, r)
	})
	reg.Register(http.MethodPost, commentsPath, githubtest.JSON(201, comment(3, ActionsBotLogin, "x")))
	s := newSticky(reg)
	s.BackOff = &backoff.ZeroBackOff{}
	url, err := s.Start(t.Context(), "")
	if err != nil || !strings.HasSuffix(url, "-3") {
		t.Errorf("url=%q err=%v", url, err)
	}
}

func TestStickyGivesUpAfterThreeTries(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	reg.Register(http.MethodGet, commentsPath, githubtest.Error(503, "unavailable")).Times(apiTries)
	s := newSticky(reg)
	s.BackOff = &backoff.ZeroBackOff{}
	if _, err := s.Finish(t.Context(), "r"); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("err = %v", err)
	}
}

func TestStickyDoesNotRetryClientErrors(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	reg.Register(http.MethodGet, commentsPath, githubtest.Page([]any{}, 1, 1))
	reg.Register(http.MethodPost, commentsPath, githubtest.Error(403, "Resource not accessible by integration"))
	s := newSticky(reg)
	s.BackOff = &backoff.ZeroBackOff{}
	if _, err := s.Finish(t.Context(), "r"); err == nil {
		t.Error("403 not reported")
	}
}

// TestEnsurePullRequestRetryFindsCreated: the create went through but its
// answer was lost (502); the retry finds the pull request instead of opening
// a second one, and still reports it as created.
func TestEnsurePullRequestRetryFindsCreated(t *testing.T) {
	reg := githubtest.New(t, "/api-v3")
	list := "/repos/octo/hello/pulls"
	reg.Register(http.MethodGet, list, githubtest.JSON(200, []any{}))
	reg.Register(http.MethodPost, list, githubtest.Error(502, "Bad Gateway"))
	reg.Register(http.MethodGet, list, githubtest.JSON(200, []any{prJSON(12, "runner/fix-1")}))
	reg.Register(http.MethodPatch, list+"/12", githubtest.JSON(200, prJSON(12, "runner/fix-1")))
	o := prOptions()
	o.Labels, o.BackOff = nil, &backoff.ZeroBackOff{}
	_, n, created, err := EnsurePullRequest(t.Context(), reg.Client(), o)
	if err != nil || n != 12 {
		t.Errorf("n=%d created=%v err=%v", n, created, err)
	}
}

func TestTransient(t *testing.T) {
	if transient(context.Canceled) || transient(errors.New("x")) {
		t.Error("non-API errors are not transient")
	}
}
