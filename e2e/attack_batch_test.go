package e2e

import (
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// authGitServer serves a bare clone of src as /o/r.git over git's smart
// HTTP, only to requests with basic auth user:pass; it counts them.
func authGitServer(t *testing.T, src, user, pass string) (url string, authed *atomic.Int32) {
	t.Helper()
	root := t.TempDir()
	gittest.Run(t, root, "clone", "-q", "--bare", src, filepath.Join(root, "o", "r.git"))
	backend, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	h := &cgi.Handler{Path: backend, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard}
	authed = &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		authed.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, authed
}

// TestAttackBatchURLCredentials plays issue 30's sixth finding: a batch
// repository URL with a password (and a second one whose clone fails,
// its error quoting the URL). The clone authenticates with it, and the
// password is in no file of the out dir (manifest.json, results.jsonl,
// batch-result.json, the runs' logs, summary.md), nor on stdout or
// stderr; a second run resumes from the frozen manifest.
func TestAttackBatchURLCredentials(t *testing.T) {
	t.Parallel()
	const pass = "batch-Passw0rd-31337"
	_, src := smallRepo(t)
	url, authed := authGitServer(t, src, "bob", pass)
	hostport := strings.TrimPrefix(url, "http://")
	dir := t.TempDir()
	mustWriteFile(t, filepath.Join(dir, "task.yaml"), "version: 1\nname: creds\nmodel: gpt-4.1-mini\nprompt: Look.\n"+
		"permissions:\n  read: allow\nlimits: {max_steps: 2}\n")
	mustWriteFile(t, filepath.Join(dir, "batch.yaml"), "version: 1\nname: creds\ntask: task.yaml\nrepos:\n"+
		"  - url: http://bob:"+pass+"@"+hostport+"/o/r.git\n"+
		"  - url: http://bob:"+pass+"@"+hostport+"/o/missing.git\n")
	srv := llmtest.NewServerFunc(t, func(llmtest.RecordedRequest) llmtest.Reply { return llmtest.Turn{Text: "Looked."}.Reply() })
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	out := filepath.Join(dir, "out")
	for run := 1; run <= 2; run++ {
		res := runRunner(t, dir, env, "batch", "run", "batch.yaml", "--out", out, "--base-url", srv.URL())
		if run == 1 && authed.Load() == 0 {
			t.Fatalf("the clone never authenticated (exit %d):\n%s", res.code, res.stderr)
		}
		if strings.Contains(res.stderr, "differs") || strings.Contains(res.stderr, "manifest") {
			t.Errorf("run %d: the frozen manifest was refused:\n%s", run, res.stderr)
		}
		files := readTree(t, out)
		for _, want := range []string{"manifest.json", "results.jsonl"} {
			if _, ok := files[want]; !ok {
				t.Fatalf("run %d: no %s (exit %d)\n%s", run, want, res.code, res.stderr)
			}
		}
		files["stdout"], files["stderr"] = res.stdout, res.stderr
		results := 0
		for name, content := range files {
			if strings.Contains(content, pass) {
				t.Errorf("run %d: %s holds the URL's password", run, name)
			}
			if strings.HasSuffix(name, "batch-result.json") {
				results++
			}
		}
		if results != 2 {
			t.Errorf("run %d: %d batch-result.json files, want 2", run, results)
		}
		if !strings.Contains(files["manifest.json"], "bob:[REDACTED]@"+hostport) {
			t.Errorf("manifest.json does not name the repository with its password redacted:\n%s", files["manifest.json"])
		}
	}
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); err != nil {
		t.Fatal(err)
	}
}
