package github

import (
	"errors"
	"net/http"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

func TestLoadEnv(t *testing.T) {
	e, err := LoadEnv(map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_REPOSITORY": "octo/hello",
		"GITHUB_RUN_ID": "99", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_SERVER_URL": "https://ghe.example.com/",
		"GITHUB_API_URL": "https://ghe.example.com/api/v3", "GH_TOKEN": "gh-tok",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !e.Actions || e.Owner != "octo" || e.Repo != "hello" || e.RunAttempt != 2 || e.Token != "gh-tok" {
		t.Errorf("env = %+v", e)
	}
	if got, want := e.RunURL(), "https://ghe.example.com/octo/hello/actions/runs/99"; got != want {
		t.Errorf("RunURL = %q, want %q", got, want)
	}
	if !e.Enterprise() || e.RemoteURL() != "https://ghe.example.com/octo/hello.git" {
		t.Errorf("enterprise=%v remote=%q", e.Enterprise(), e.RemoteURL())
	}

	d, err := LoadEnv(map[string]string{"GITHUB_TOKEN": "a", "GH_TOKEN": "b"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Actions || d.ServerURL != DefaultServerURL || d.APIURL != DefaultAPIURL || d.Token != "a" || d.RunURL() != "" || d.Enterprise() {
		t.Errorf("defaults = %+v", d)
	}
}

func TestLoadEnvErrors(t *testing.T) {
	for _, env := range []map[string]string{
		{"GITHUB_REPOSITORY": "no-slash"},
		{"GITHUB_REPOSITORY": "a/b/c"},
		{"GITHUB_REPOSITORY": "/b"},
		{"GITHUB_API_URL": "not a url"},
		{"GITHUB_SERVER_URL": "ftp://x"},
		{"GITHUB_RUN_ATTEMPT": "x"},
		{"GITHUB_ACTIONS": "true"},
	} {
		if _, err := LoadEnv(env); !errors.Is(err, ErrEnv) {
			t.Errorf("%v: err = %v, want ErrEnv", env, err)
		}
	}
}

// TestEnterpriseClient checks that GITHUB_API_URL of a GHES host sends API
// calls under /api/v3/, with the token.
func TestEnterpriseClient(t *testing.T) {
	reg := githubtest.New(t, "/api/v3")
	reg.Register(http.MethodGet, "/repos/octo/hello/pulls/7", func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer tok" {
			t.Errorf("Authorization = %q", got)
		}
		githubtest.JSON(200, map[string]any{"number": 7, "head": map[string]any{"sha": "h"}})(w, r)
	})
	e, err := LoadEnv(map[string]string{
		"GITHUB_REPOSITORY": "octo/hello", "GITHUB_TOKEN": "tok",
		"GITHUB_SERVER_URL": reg.Server.URL, "GITHUB_API_URL": reg.Server.URL + "/api/v3",
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(e, reg.Server.Client())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.UploadURL.String(), reg.Server.URL+"/api/uploads/"; got != want {
		t.Errorf("upload URL = %q, want %q", got, want)
	}
	pr, _, err := c.PullRequests.Get(t.Context(), "octo", "hello", 7)
	if err != nil || pr.GetHead().GetSHA() != "h" {
		t.Fatalf("pr=%v err=%v", pr, err)
	}
}

func TestDotComClientKeepsDefaultURL(t *testing.T) {
	e, err := LoadEnv(map[string]string{"GITHUB_API_URL": "https://api.github.com/"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL.String() != "https://api.github.com/" {
		t.Errorf("base URL = %s", c.BaseURL)
	}
}
