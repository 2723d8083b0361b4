package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/internal/gittest"
)

// The repository of the bundled pull_request payload
// (github/testdata/events/pull_request.opened.json: #2, head "changes").
const (
	actOwner = "sample-author"
	actRepo  = "Hello-World"
	actPR    = 2
	// actBranch is the runner's default branch for the task "act" on #2.
	actBranch = "runner/act/pr-2"
	// actToken is the job's GITHUB_TOKEN (act's secret, github.token).
	actToken = "ghs_acttest0123456789abcdefghijklmnopq"
)

// actBinary is nektos/act: .ci/bin/act of this checkout (bash .ci/run
// installs it there), else act on PATH; the test is skipped without it.
func actBinary(t *testing.T) string {
	t.Helper()
	if p := filepath.Join(repoRoot, ".ci", "bin", "act"); isExecutable(p) {
		return p
	}
	if p, err := exec.LookPath("act"); err == nil {
		return p
	}
	t.Skip("nektos/act is not installed: `GOBIN=$PWD/.ci/bin go install github.com/nektos/act@v0.2.89` " +
		"(bash .ci/run does this), then `make act`")
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// actWorkspace is a git repository holding this checkout's tracked files
// as they are in the work tree (so uncommitted changes are what runs), the
// self-test workflow in .github/workflows and its task in .github/runner,
// committed once, with origin on github.com (act takes the repository's
// name from it). It returns the directory and the commit.
func actWorkspace(t *testing.T) (dir, head string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "ws")
	copyTracked(t, dir)
	copyFileMode(t, filepath.Join(repoRoot, "e2e", "testdata", "act", "workflow.yml"),
		filepath.Join(dir, ".github", "workflows", "act.yml"), 0o644)
	copyFileMode(t, filepath.Join(repoRoot, "e2e", "testdata", "act", "task.yaml"),
		filepath.Join(dir, ".github", "runner", "act.yaml"), 0o644)
	copyFileMode(t, filepath.Join(repoRoot, "e2e", "testdata", "act", "bad-task.yaml"),
		filepath.Join(dir, ".github", "runner", "bad.yaml"), 0o644)
	gittest.Run(t, dir, "init", "-q", "-b", "master")
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "self-test")
	gittest.Run(t, dir, "remote", "add", "origin", "https://github.com/"+actOwner+"/"+actRepo+".git")
	return dir, strings.TrimSpace(gittest.Run(t, dir, "rev-parse", "HEAD"))
}

// copyTracked copies this checkout's tracked files, as they are in the work
// tree, into dir; it skips the test outside a git checkout.
func copyTracked(t *testing.T, dir string) {
	t.Helper()
	files, err := exec.CommandContext(t.Context(), "git", "-C", repoRoot, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v): the workspace is made of the tracked files", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		src := filepath.Join(repoRoot, f)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a symlink
		}
		copyFileMode(t, src, filepath.Join(dir, f), fi.Mode().Perm())
	}
}

func copyFileMode(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		t.Fatal(err)
	}
}

// gitRemote is a bare clone of the workspace as OWNER/REPO.git served
// over git's smart HTTP (git http-backend, pushes allowed): the
// GITHUB_SERVER_URL the runner pushes to. It records the credentials of
// each push.
type gitRemote struct {
	url, bare string

	mu    sync.Mutex
	auths []string // "user:password" of each receive-pack request
}

func newGitRemote(t *testing.T, ws string) *gitRemote {
	t.Helper()
	root := t.TempDir()
	g := &gitRemote{bare: filepath.Join(root, actOwner, actRepo+".git")}
	gittest.Run(t, root, "clone", "-q", "--bare", ws, g.bare)
	gittest.Run(t, g.bare, "config", "http.receivepack", "true")
	backend, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	h := &cgi.Handler{Path: backend, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			user, pass, _ := r.BasicAuth()
			g.mu.Lock()
			g.auths = append(g.auths, user+":"+pass)
			g.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.url = srv.URL
	return g
}

// pushAuths are the credentials the pushes came with.
func (g *gitRemote) pushAuths() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.auths)
}

// ghComment is a comment of the job's token identity on #2.
func ghComment(body string) map[string]any {
	return map[string]any{"id": 9, "body": body, "user": map[string]any{"login": "github-actions[bot]", "type": "Bot"},
		"html_url": "https://github.com/" + actOwner + "/" + actRepo + "/pull/2#issuecomment-9"}
}

// sticky is what the fake GitHub received for the sticky comment, written
// by its handlers and read by the test (hence the lock: the runner's
// requests come from another process, which orders nothing for the race
// detector).
type sticky struct {
	mu      sync.Mutex
	started string   // body of the comment as created
	auth    string   // its request's Authorization header
	edits   []string // bodies of its later edits, last one last
}

// bodies returns the created body and the edits.
func (c *sticky) bodies() (string, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started, slices.Clone(c.edits)
}

// authorization is the Authorization header the comment was created with.
func (c *sticky) authorization() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.auth
}

// register registers the sticky comment's calls: the token's identity
// (403, as for GITHUB_TOKEN) once per runner process (procs), the search
// for an earlier comment (none), its creation, then the searches for it
// (answered with its latest body) and its edits.
func (c *sticky) register(api *githubtest.Registry, procs, searches, patches int) {
	repo := "/repos/" + actOwner + "/" + actRepo
	comments := repo + "/issues/2/comments"
	api.Register(http.MethodGet, "/user", githubtest.Error(http.StatusForbidden, "Resource not accessible by integration")).Times(procs)
	api.Register(http.MethodGet, comments, githubtest.Page([]any{}, 1, 1))
	api.Register(http.MethodPost, comments, func(w http.ResponseWriter, r *http.Request) {
		body := decodeBody(r)
		c.mu.Lock()
		c.started, c.auth = body, r.Header.Get("Authorization")
		c.mu.Unlock()
		githubtest.JSON(http.StatusCreated, ghComment(body))(w, r)
	})
	api.Register(http.MethodGet, comments, func(w http.ResponseWriter, r *http.Request) {
		started, edits := c.bodies()
		if len(edits) > 0 {
			started = edits[len(edits)-1]
		}
		githubtest.Page([]any{ghComment(started)}, 1, 1)(w, r)
	}).Times(searches)
	api.Register(http.MethodPatch, repo+"/issues/comments/9", func(w http.ResponseWriter, r *http.Request) {
		body := decodeBody(r)
		c.mu.Lock()
		c.edits = append(c.edits, body)
		c.mu.Unlock()
		githubtest.JSON(http.StatusOK, ghComment(body))(w, r)
	}).Times(patches)
}

// decodeBody is the "body" of a comment request ("" if there is none).
func decodeBody(r *http.Request) string {
	var body struct{ Body string }
	_ = json.NewDecoder(r.Body).Decode(&body)
	return body.Body
}

// actLine is one line of act's --json log.
type actLine struct {
	Msg       string            `json:"msg"`
	Level     string            `json:"level"`
	Step      string            `json:"step"`
	RawOutput bool              `json:"raw_output"`
	Command   string            `json:"command"`
	Arg       string            `json:"arg"`
	KV        map[string]string `json:"kvPairs"`
	Content   string            `json:"content"`
}

// actResult is how one act run ended: its exit code, its log, and the
// files the workflow's last step copied into RESULT_DIR.
type actResult struct {
	code   int
	raw    string
	lines  []actLine
	result string // RESULT_DIR
}

// runAct runs the workflow of ws under act on the self-hosted platform
// (no containers, no action download) with the bundled pull_request
// event, the workflow's variables vars (TASK: a task spec's path in ws;
// PROMPT), the fake model at modelURL and the fake GitHub at apiURL (REST)
// and serverURL (git).
func runAct(t *testing.T, ws string, vars map[string]string, modelURL, apiURL, serverURL string) actResult {
	t.Helper()
	return runActWorkflow(t, ws, ".github/workflows/act.yml", vars, modelURL, apiURL, serverURL)
}

// runActWorkflow runs the workflow at path wf of ws as runAct does; extra
// are more act arguments (--local-repository).
func runActWorkflow(t *testing.T, ws, wf string, vars map[string]string, modelURL, apiURL, serverURL string, extra ...string) actResult {
	t.Helper()
	res := actResult{result: t.TempDir()}
	event := filepath.Join(repoRoot, "github", "testdata", "events", "pull_request.opened.json")
	args := []string{"pull_request", "--json", "-W", wf, "-e", event,
		"-P", "ubuntu-latest=-self-hosted", "--action-offline-mode", "--no-cache-server",
		"--action-cache-path", filepath.Join(t.TempDir(), "act-cache"), "--actor", actOwner,
		"-s", "GITHUB_TOKEN=" + actToken, "-s", "OPENAI_API_KEY=sk-acttest-0123456789abcdef",
		"--var", "MODEL_URL=" + modelURL,
		"--env", "GITHUB_API_URL=" + apiURL, "--env", "GITHUB_SERVER_URL=" + serverURL, "--env", "RESULT_DIR=" + res.result}
	for k, v := range vars {
		args = append(args, "--var", k+"="+v)
	}
	// act cannot fetch actions/cache offline: the stub records what the
	// action asks it to cache (RESULT_DIR/cache.txt).
	args = append(args, "--local-repository", "actions/cache@v5="+filepath.Join(repoRoot, "e2e", "testdata", "act", "cache-stub"))
	args = append(args, extra...)
	cmd := exec.CommandContext(t.Context(), actBinary(t), args...)
	cmd.Dir, cmd.Env = ws, actEnv(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("act: %v\n%s", err, out.String())
	}
	res.raw = out.String()
	if dir := os.Getenv("RUNNER_ACT_LOG"); dir != "" { // make act keeps the logs
		if err := os.WriteFile(filepath.Join(dir, t.Name()+".jsonl"), out.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	}
	sc := bufio.NewScanner(strings.NewReader(res.raw))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var l actLine
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			res.lines = append(res.lines, l)
		}
	}
	return res
}

// actEnv is this process's environment for act, which hands it on to the
// steps (self-hosted): no Actions variables of an outer job, no module
// downloads, act's own version check off, and private caches for the
// runner's snapshots while Go keeps its build and module caches.
func actEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "ACTIONS_") ||
			k == "GOFLAGS" || k == "GOPROXY" || k == "XDG_CACHE_HOME" || k == "GOCACHE" || k == "GOMODCACHE" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "ACT_DISABLE_VERSION_CHECK=1", "GOPROXY=off", "GOFLAGS=", "XDG_CACHE_HOME="+t.TempDir(),
		"GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"))
}

// file is a file the workflow copied into RESULT_DIR ("" when absent).
func (r actResult) file(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.result, name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(data)
}

// outputs are the runner step's outputs as the workflow saw them.
func (r actResult) outputs(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	if err := json.Unmarshal([]byte(r.file(t, "outputs.json")), &m); err != nil {
		t.Fatalf("outputs.json: %v\n%s", err, r.raw)
	}
	return m
}

// commands are the workflow commands act parsed, of one name.
func (r actResult) commands(name string) []actLine {
	var out []actLine
	for _, l := range r.lines {
		if l.Command == name {
			out = append(out, l)
		}
	}
	return out
}

// rawOutput is everything the steps printed, one line each.
func (r actResult) rawOutput() string {
	var b strings.Builder
	for _, l := range r.lines {
		if l.RawOutput {
			b.WriteString(l.Msg)
		}
	}
	return b.String()
}
