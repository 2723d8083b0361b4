package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
)

// fakeGitHub is a permissive fake of the GitHub API for attack tests: it
// answers the calls a run makes (identity, sticky comment, pull request,
// collaborator permission) and records every request it receives, so a
// test can search all of it for a leaked secret.
type fakeGitHub struct {
	reg *githubtest.Registry
	// perms answers GET …/collaborators/LOGIN/permission (missing: 404).
	perms map[string]string

	mu       sync.Mutex
	received []string // "METHOD url\nbody" of each request
	auths    []string // the Authorization header of each request
	comments map[int64]string
	pulls    []string // bodies of pull request creations
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{reg: githubtest.New(t, "/api/v3"), perms: map[string]string{}, comments: map[int64]string{}}
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		f.reg.RegisterPrefix(m, "/", f.serve)
	}
	return f
}

// url is GITHUB_API_URL.
func (f *fakeGitHub) url() string { return f.reg.Server.URL + "/api/v3" }

var permPathRE = regexp.MustCompile(`/collaborators/([^/]+)/permission$`)

func (f *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	f.mu.Lock()
	f.received = append(f.received, r.Method+" "+r.URL.String()+"\n"+string(body)) // the token is in its header, as it should be
	f.auths = append(f.auths, r.Header.Get("Authorization"))
	f.mu.Unlock()
	reply := func(status int, v any) { githubtest.JSON(status, v)(w, r) }
	comment := func(id int64, b string) map[string]any {
		return map[string]any{"id": id, "body": b, "user": map[string]any{"login": "github-actions[bot]", "type": "Bot"},
			"html_url": "https://github.com/" + actOwner + "/" + actRepo + "/pull/2#issuecomment-9"}
	}
	var in struct {
		Body string `json:"body"`
	}
	_ = json.Unmarshal(body, &in)
	switch {
	case path == "/user":
		reply(http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration"})
	case permPathRE.MatchString(path):
		login := permPathRE.FindStringSubmatch(path)[1]
		p, ok := f.perms[login]
		if !ok {
			reply(http.StatusNotFound, map[string]any{"message": "Not Found"})
			return
		}
		reply(http.StatusOK, map[string]any{"permission": p, "role_name": p})
	case strings.HasSuffix(path, "/comments") && r.Method == http.MethodGet:
		f.mu.Lock()
		var list []any
		for id, b := range f.comments {
			list = append(list, comment(id, b))
		}
		f.mu.Unlock()
		githubtest.Page(list, 1, 1)(w, r)
	case strings.HasSuffix(path, "/comments") && r.Method == http.MethodPost:
		f.mu.Lock()
		f.comments[9] = in.Body
		f.mu.Unlock()
		reply(http.StatusCreated, comment(9, in.Body))
	case strings.Contains(path, "/issues/comments/") && r.Method == http.MethodPatch:
		f.mu.Lock()
		f.comments[9] = in.Body
		f.mu.Unlock()
		reply(http.StatusOK, comment(9, in.Body))
	case strings.HasSuffix(path, "/pulls") && r.Method == http.MethodGet:
		reply(http.StatusOK, []any{})
	case strings.HasSuffix(path, "/pulls") && r.Method == http.MethodPost:
		f.mu.Lock()
		f.pulls = append(f.pulls, string(body))
		f.mu.Unlock()
		reply(http.StatusCreated, map[string]any{"number": 3, "html_url": "https://github.com/" + actOwner + "/" + actRepo + "/pull/3"})
	default:
		reply(http.StatusNotFound, map[string]any{"message": "Not Found"})
	}
}

// all is everything the fake received.
func (f *fakeGitHub) all() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.received, "\n----\n")
}

// commentBody is the sticky comment's last body.
func (f *fakeGitHub) commentBody() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.comments[9]
}

// actionsRun is the GitHub Actions environment of one runner process.
type actionsRun struct {
	env             []string
	output, summary string
	eventPath       string
}

// newActionsRun writes the event payload and returns the environment of
// a step on GitHub Actions for it, with the API at api.
func newActionsRun(t *testing.T, eventName, payload, api, server string, extra ...string) *actionsRun {
	t.Helper()
	dir := t.TempDir()
	a := &actionsRun{output: filepath.Join(dir, "output"), summary: filepath.Join(dir, "summary"),
		eventPath: filepath.Join(dir, "event.json")}
	if err := os.WriteFile(a.eventPath, []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	a.env = append(baseEnv(t), "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME="+eventName, "GITHUB_EVENT_PATH="+a.eventPath,
		"GITHUB_REPOSITORY="+actOwner+"/"+actRepo, "GITHUB_API_URL="+api, "GITHUB_SERVER_URL="+server,
		"GITHUB_RUN_ID=7", "GITHUB_OUTPUT="+a.output, "GITHUB_STEP_SUMMARY="+a.summary,
		"OPENAI_API_KEY=sk-test-0123456789abcdef")
	a.env = append(a.env, extra...)
	return a
}

// files are the step's output and summary files.
func (a *actionsRun) files(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, p := range map[string]string{"GITHUB_OUTPUT": a.output, "GITHUB_STEP_SUMMARY": a.summary} {
		if b, err := os.ReadFile(p); err == nil {
			out[name] = string(b)
		}
	}
	return out
}

// workflowCommand is a line GitHub's Actions runner would act on.
type workflowCommand struct {
	stream, line string
}

// liveCommands reads text as GitHub's Actions runner reads a step's
// output (ActionCommandManager): after ::stop-commands::TOKEN nothing is
// a command until ::TOKEN::; otherwise a line whose trimmed start is
// "::name" is a command, and so is any line holding "##[" (the old form).
func liveCommands(stream, text string) []workflowCommand {
	var out []workflowCommand
	stop := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if stop != "" {
			if line == "::"+stop+"::" {
				stop = ""
			}
			continue
		}
		trim := strings.TrimLeft(line, " \t")
		switch {
		case strings.HasPrefix(trim, "::stop-commands::"):
			stop = strings.TrimPrefix(trim, "::stop-commands::")
			out = append(out, workflowCommand{stream, line})
		case strings.HasPrefix(trim, "::") && len(trim) > 2, strings.Contains(line, "##["):
			out = append(out, workflowCommand{stream, line})
		}
	}
	return out
}

// authorizations are the Authorization headers the fake received.
func (f *fakeGitHub) authorizations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.auths)
}

// headerLog is an HTTP handler's record of the headers it received.
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
}

// wrap records each request's headers, then serves it with next.
func (l *headerLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, r.Header.Clone())
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// values are the values of header name in every request, and the count
// of requests.
func (l *headerLog) values(name string) (vals []string, requests int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range l.seen {
		if v := h.Get(name); v != "" {
			vals = append(vals, v)
		}
	}
	return vals, len(l.seen)
}

// redirector answers every request with a 307 to the same path on target.
func redirector(t *testing.T, target string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.TrimRight(target, "/")+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	return srv
}
