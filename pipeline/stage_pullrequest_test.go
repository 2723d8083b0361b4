package pipeline

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// gitServer serves bare repositories under root over smart HTTP.
func gitServer(t *testing.T, root string) string {
	t.Helper()
	backend, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	h := &cgi.Handler{Path: backend, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestExecOpensPullRequest: in Actions with RUNNER_PULL_REQUEST=true, a
// successful run that changed files pushes them on the default branch name
// over HTTP and opens a draft pull request against the pushed ref's branch.
func TestExecOpensPullRequest(t *testing.T) {
	spec, repo := execFixture(t)
	gittest.Run(t, repo, "init", "-q", "-b", "main")
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "init")
	base := gittest.Run(t, repo, "rev-parse", "HEAD")
	root := t.TempDir()
	remote := filepath.Join(root, "octo", "hello.git")
	gittest.Run(t, root, "clone", "-q", "--bare", repo, remote)
	gittest.Run(t, remote, "config", "http.receivepack", "true")

	api := githubtest.New(t, "/api/v3")
	branch := "runner/unit"
	api.Register(http.MethodGet, "/repos/octo/hello/pulls", githubtest.JSON(200, []any{})).WithQuery("head", "octo:"+branch)
	var created map[string]any
	api.Register(http.MethodPost, "/repos/octo/hello/pulls", githubtest.Capture(t, &created, githubtest.JSON(201,
		map[string]any{"number": 3, "html_url": "https://github.com/octo/hello/pull/3", "head": map[string]any{"ref": branch}})))
	env, outputs, _ := actionsEnv(t, "push", `{"ref":"refs/heads/main"}`, "RUNNER_PULL_REQUEST=true", "GITHUB_REF=refs/heads/main")
	for i, kv := range env {
		switch {
		case strings.HasPrefix(kv, "GITHUB_API_URL="):
			env[i] = "GITHUB_API_URL=" + api.Server.URL + "/api/v3"
		case strings.HasPrefix(kv, "GITHUB_SERVER_URL="):
			env[i] = "GITHUB_SERVER_URL=" + gitServer(t, root)
		}
	}
	srv := newModel(t, writeTurn(), llmtest.Turn{Text: "Wrote hello.txt."}.Reply())
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Run(t, remote, "show", branch+":hello.txt"); got != "hello" {
		t.Errorf("pushed hello.txt = %q", got)
	}
	if parent := gittest.Run(t, remote, "rev-parse", branch+"^"); parent != base {
		t.Errorf("branch parent %s, want the base %s", parent, base)
	}
	if created["base"] != "main" || created["head"] != branch || created["draft"] != true {
		body, _ := json.Marshal(created)
		t.Errorf("pull request %s", body)
	}
	if o, err := os.ReadFile(outputs); err != nil || !strings.Contains(string(o), "https://github.com/octo/hello/pull/3") {
		t.Errorf("outputs %q (%v), want the pull request URL", o, err)
	}
}
