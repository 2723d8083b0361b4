package batch

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/seed43ef5acb/runner/internal/gittest"
)

func TestClonerAuthSelection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, token, server, src string
		want                     bool // the token is sent
	}{
		{"github.com https", "tok", "", "https://github.com/o/r.git", true},
		{"host case-insensitive", "tok", "", "https://GitHub.com/o/r", true},
		{"enterprise server", "tok", "https://ghe.example.com", "https://ghe.example.com/o/r.git", true},
		{"no token", "", "", "https://github.com/o/r.git", false},
		{"other host", "tok", "", "https://gitlab.com/o/r.git", false},
		{"lookalike host", "tok", "", "https://github.com.evil.example/o/r.git", false},
		{"github.com on another port", "tok", "", "https://github.com:8443/o/r.git", false},
		{"plain http to github.com", "tok", "", "http://github.com/o/r.git", false},
		{"github.com when the server is enterprise", "tok", "https://ghe.example.com", "https://github.com/o/r.git", false},
		{"credentials in the URL", "tok", "", "https://me:pw@github.com/o/r.git", false},
		{"ssh", "tok", "", "ssh://git@github.com/o/r.git", false},
		{"scp-like", "tok", "", "git@github.com:o/r.git", false},
		{"file URL", "tok", "", "file:///srv/r", false},
		{"local path", "tok", "", "/srv/r", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &cloner{token: tt.token, server: tt.server}
			got := c.auth(tt.src)
			if !tt.want {
				if got != nil {
					t.Errorf("auth(%q) = %v, want none", tt.src, got)
				}
				return
			}
			ba, ok := got.(*githttp.BasicAuth)
			if !ok || ba.Username != "x-access-token" || ba.Password != tt.token {
				t.Errorf("auth(%q) = %#v, want basic auth x-access-token:%s", tt.src, got, tt.token)
			}
		})
	}
}

// TestClonePrivateOverHTTP clones through git http-backend behind a server
// that demands basic auth x-access-token:tok, as GitHub does for a private
// repository. The server stands in for the GitHub server (GitHubServerURL),
// so it is plain http on loopback.
func TestClonePrivateOverHTTP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url, denied := privateGitServer(t, filepath.Join(dir, "remote"), "# private\n")
	srvURL := strings.TrimSuffix(url, "/private")

	tests := []struct {
		name, token, server string
		wantErr             bool
	}{
		{"token for the server", "tok", srvURL, false},
		{"no token", "", srvURL, true},
		{"wrong token", "nope", srvURL, true},
		{"token kept from another host", "tok", "", true}, // the server is github.com: not sent
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &cloner{dir: filepath.Join(dir, "cache"), depth: 1, token: tt.token, server: tt.server}
			repo := Repo{ID: "p" + string(rune('a'+i))}
			work := filepath.Join(dir, "work", repo.ID)
			commit, err := c.workTree(t.Context(), repo, url, work)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("cloned without the right credentials")
				}
				if strings.Contains(err.Error(), tt.token) && tt.token != "" {
					t.Errorf("the error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(work, "README.md")); got != "# private\n" || len(commit) != 40 {
				t.Errorf("README.md = %q, commit %q", got, commit)
			}
		})
	}
	if denied.Load() == 0 {
		t.Error("the server never refused a request: auth was not exercised")
	}
}

// TestRunClonesPrivateWithToken: RunOptions.GitHubToken reaches the cloner.
func TestRunClonesPrivateWithToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url, _ := privateGitServer(t, filepath.Join(dir, "remote"), "# private\n")
	server := strings.TrimSuffix(url, "/private")
	write(t, filepath.Join(dir, "task.yaml"), "version: 1\nname: t\nprompt: hi\ninputs: {name: {}}\n")
	spec := filepath.Join(dir, "batch.yaml")
	write(t, spec, "version: 1\nname: p\ntask: task.yaml\nretries: 0\nrepos:\n  - url: "+url+"\n    inputs: {name: private}\n")
	tests := []struct {
		name, token string
		want        Status
	}{
		{"with the token", "tok", StatusSuccess},
		{"without a token", "", StatusInfraFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, Executor: newFakeExec(func(string) behaviour { return edit }),
				GitHubToken: tt.token, GitHubServerURL: server, RetryBackoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Results) != 1 || sum.Results[0].Status != tt.want {
				t.Fatalf("results %+v, want one %s", sum.Results, tt.want)
			}
		})
	}
}

// privateGitServer serves a new repository (README.md = readme) under root
// through git http-backend, refusing any request without basic auth
// x-access-token:tok, and returns its URL and the count of refusals.
func privateGitServer(t *testing.T, root, readme string) (string, *atomic.Int32) {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	gittest.Init(t, filepath.Join(root, "private"), map[string]string{"README.md": readme})
	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	denied := &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "x-access-token" || p != "tok" {
			denied.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "auth", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/private", denied
}
