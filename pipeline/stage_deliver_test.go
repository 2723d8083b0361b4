package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// prEvent is a pull_request event on #5 of octo/hello, base main.
const prEvent = `{"action":"opened","number":5,"pull_request":{"number":5,"user":{"login":"alice"},"title":"t","head":{"ref":"f","sha":"abc",` +
	`"repo":{"full_name":"octo/hello"}},"base":{"ref":"main"}},"sender":{"login":"alice","type":"User"}}`

// deliveryRun is a run in Actions on a pull request event that comments
// and opens a pull request, against a fake API (api) and a real git
// remote served over smart HTTP (remote).
type deliveryRun struct {
	spec, repo, out   string
	remote            string
	api               *githubtest.Registry
	env               []string
	outputs, summary  string
	stderr, stdout    bytes.Buffer
	started, finished struct{ Body string }
}

const commentsPath = "/repos/octo/hello/issues/5/comments"

func newDeliveryRun(t *testing.T, receive bool) *deliveryRun {
	t.Helper()
	d := &deliveryRun{out: t.TempDir()}
	d.spec, d.repo = execFixture(t)
	gittest.Run(t, d.repo, "init", "-q", "-b", "main")
	gittest.Run(t, d.repo, "add", "-A")
	gittest.Run(t, d.repo, "commit", "-q", "-m", "init")
	root := t.TempDir()
	d.remote = filepath.Join(root, "octo", "hello.git")
	gittest.Run(t, root, "clone", "-q", "--bare", d.repo, d.remote)
	if receive {
		gittest.Run(t, d.remote, "config", "http.receivepack", "true")
	} // else git http-backend refuses every push (403)
	d.api = githubtest.New(t, "/api/v3")
	allowAuthor(d.api)
	d.env, d.outputs, d.summary = actionsEnv(t, "pull_request", prEvent, "RUNNER_PULL_REQUEST=true", "RUNNER_COMMENT=true")
	for i, kv := range d.env {
		switch {
		case strings.HasPrefix(kv, "GITHUB_API_URL="):
			d.env[i] = "GITHUB_API_URL=" + d.api.Server.URL + "/api/v3"
		case strings.HasPrefix(kv, "GITHUB_SERVER_URL="):
			d.env[i] = "GITHUB_SERVER_URL=" + gitServer(t, root)
		}
	}
	return d
}

// ownComment is a comment by the token's identity.
func ownComment(body string) map[string]any {
	return map[string]any{"id": 9, "body": body, "user": map[string]any{"login": "github-actions[bot]"},
		"html_url": "https://github.com/octo/hello/pull/5#issuecomment-9"}
}

// stubComment registers the sticky comment's start (a new comment) and,
// with finish, its final edit.
func (d *deliveryRun) stubComment(t *testing.T, finish githubtest.Responder) {
	t.Helper()
	d.api.Register(http.MethodGet, commentsPath, githubtest.Page([]any{}, 1, 1))
	d.api.Register(http.MethodPost, commentsPath, githubtest.Capture(t, &d.started, githubtest.JSON(201, ownComment("x"))))
	d.api.Register(http.MethodGet, commentsPath, func(w http.ResponseWriter, r *http.Request) {
		githubtest.Page([]any{ownComment(d.started.Body)}, 1, 1)(w, r)
	})
	d.api.Register(http.MethodPatch, "/repos/octo/hello/issues/comments/9", githubtest.Capture(t, &d.finished, finish))
}

// exec runs the task: the model writes hello.txt, then finishes.
func (d *deliveryRun) exec(t *testing.T) error {
	t.Helper()
	return testRun{specFile: d.spec, repo: d.repo, out: d.out, noLog: true,
		replies: []llmtest.Reply{writeTurn(), llmtest.Turn{Text: "Wrote hello.txt."}.Reply()},
		opts:    func(o *ExecOptions) { o.Environ, o.Quiet, o.Stdout, o.Stderr = d.env, false, &d.stdout, &d.stderr }}.exec(t).err
}

// outputsMap reads GITHUB_OUTPUT (heredoc form) into a map; a name
// written twice keeps its last value, as GitHub does.
func outputsMap(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		m[name] = strings.Join(val, "\n")
	}
	return m
}

// publishEvents are the publish lines of the log, checked to come before
// run.finished (the log's last line, with status want).
func publishEvents(t *testing.T, d *deliveryRun, want event.Status) []event.Publish {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(d.out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs := validLog(t, data)
	var out []event.Publish
	for _, rec := range recs {
		if rec.Type == "publish" {
			var p event.Publish
			if err := json.Unmarshal(rec.Raw, &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	var fin event.RunFinished
	if err := json.Unmarshal(recs[len(recs)-1].Raw, &fin); err != nil || fin.Status != want {
		t.Errorf("run.finished %s (%v), want status %s", recs[len(recs)-1].Raw, err, want)
	}
	return out
}

// TestExecPullRequestCreateFails: the agent's work succeeded, but the
// pull request API answers 500 (after the retries): the branch is pushed,
// the run ends delivery_failed with exit 3, the log records the failed
// call before run.finished, the outputs say so (written once, after
// delivery), the sticky comment says "changes ready, pull request could
// not be opened: …", and the error is one ::error line.
func TestExecPullRequestCreateFails(t *testing.T) {
	d := newDeliveryRun(t, true)
	d.stubComment(t, githubtest.JSON(200, ownComment("y")))
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls", githubtest.JSON(200, []any{})).Times(3)
	d.api.Register(http.MethodPost, "/repos/octo/hello/pulls", githubtest.JSON(500, map[string]any{"message": "boom"})).Times(3)
	err := d.exec(t)
	if ExitCode(err) != ExitInfra {
		t.Fatalf("exit %d (%v), want 3", ExitCode(err), err)
	}
	out := outputsMap(t, d.outputs)
	if out["status"] != "delivery_failed" || out["exit-code"] != "3" || out["pr-url"] != "" ||
		out["comment-url"] != "https://github.com/octo/hello/pull/5#issuecomment-9" {
		t.Errorf("outputs %v", out)
	}
	if raw, _ := os.ReadFile(d.outputs); strings.Count(string(raw), "status<<") != 1 {
		t.Errorf("status written %d times, want once:\n%s", strings.Count(string(raw), "status<<"), raw)
	}
	pubs := publishEvents(t, d, event.StatusDeliveryFailed)
	if len(pubs) != 3 || pubs[0].Target != event.PublishPush || !pubs[0].OK || pubs[0].Branch != "runner/unit/pr-5" || len(pubs[0].Commit) != 40 ||
		pubs[1].Target != event.PublishPullRequest || pubs[1].OK || !strings.Contains(pubs[1].Error, "500") ||
		pubs[2].Target != event.PublishComment || !pubs[2].OK {
		t.Errorf("publish events %+v", pubs)
	}
	if len(pubs) > 0 && !strings.Contains(d.finished.Body, "✅ push of `runner/unit/pr-5` at "+pubs[0].Commit[:min(12, len(pubs[0].Commit))]) {
		t.Errorf("the final comment does not name the branch and commit pushed:\n%s", d.finished.Body)
	}
	if !strings.Contains(d.finished.Body, "changes ready, pull request could not be opened: ") ||
		!strings.Contains(d.finished.Body, "delivery failed") || strings.Contains(d.finished.Body, "✅ runner") {
		t.Errorf("final comment:\n%s", d.finished.Body)
	}
	if gittest.Run(t, d.remote, "show", "runner/unit/pr-5:hello.txt") != "hello" {
		t.Error("branch not pushed")
	}
	errs := strings.Count(d.stderr.String(), "::error ")
	if errs != 1 || !strings.Contains(d.stderr.String(), "::error title=runner%3A delivery failed::") ||
		!strings.Contains(d.stderr.String(), "::warning title=runner%3A delivery::pull request failed") {
		t.Errorf("%d ::error lines, want 1:\n%s", errs, d.stderr.String())
	}
	var exit *ExitError
	if !errorsAs(err, &exit) || !exit.Reported {
		t.Errorf("error %v not marked reported: the CLI would print it again", err)
	}
}

// TestExecPushRefused: the remote refuses the push: no pull request call
// is made, the run ends delivery_failed and the comment says the branch
// could not be pushed.
func TestExecPushRefused(t *testing.T) {
	d := newDeliveryRun(t, false)
	d.stubComment(t, githubtest.JSON(200, ownComment("y")))
	err := d.exec(t)
	if ExitCode(err) != ExitInfra {
		t.Fatalf("exit %d (%v), want 3", ExitCode(err), err)
	}
	out := outputsMap(t, d.outputs)
	if out["status"] != "delivery_failed" || out["exit-code"] != "3" || out["pr-url"] != "" {
		t.Errorf("outputs %v", out)
	}
	pubs := publishEvents(t, d, event.StatusDeliveryFailed)
	if len(pubs) != 2 || pubs[0].Target != event.PublishPush || pubs[0].OK || pubs[0].Error == "" {
		t.Errorf("publish events %+v", pubs)
	}
	if !strings.Contains(d.finished.Body, "changes ready, the branch could not be pushed: ") {
		t.Errorf("final comment:\n%s", d.finished.Body)
	}
}

// TestExecLabelsFail: the pull request is opened but its labels cannot be
// added: its URL is kept in the outputs and the log, and the run ends
// delivery_failed.
func TestExecLabelsFail(t *testing.T) {
	d := newDeliveryRun(t, true)
	mustWrite(t, d.spec, runSpec+"github:\n  pull_request:\n    branch: runner/fix\n    title: Fix\n    labels: [bot]\n")
	d.stubComment(t, githubtest.JSON(200, ownComment("y")))
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls", githubtest.JSON(200, []any{}))
	d.api.Register(http.MethodPost, "/repos/octo/hello/pulls", githubtest.JSON(201,
		map[string]any{"number": 6, "html_url": "https://github.com/octo/hello/pull/6", "head": map[string]any{"ref": "runner/fix"}}))
	d.api.Register(http.MethodPost, "/repos/octo/hello/issues/6/labels", githubtest.JSON(403, map[string]any{"message": "Resource not accessible by integration"}))
	err := d.exec(t)
	if ExitCode(err) != ExitInfra {
		t.Fatalf("exit %d (%v), want 3", ExitCode(err), err)
	}
	if out := outputsMap(t, d.outputs); out["status"] != "delivery_failed" || out["pr-url"] != "https://github.com/octo/hello/pull/6" {
		t.Errorf("outputs %v", out)
	}
	pubs := publishEvents(t, d, event.StatusDeliveryFailed)
	if len(pubs) != 4 || pubs[1].URL != "https://github.com/octo/hello/pull/6" || pubs[2].Target != event.PublishLabels ||
		pubs[2].URL != "https://github.com/octo/hello/pull/6" {
		t.Errorf("publish events %+v", pubs)
	}
	if !strings.Contains(pubs[2].Error, "pull-requests: write") {
		t.Errorf("the labels' 403 does not name the permission that fixes it: %q", pubs[2].Error)
	}
	var res struct {
		PRURL      string `json:"pr_url"`
		CommentURL string `json:"comment_url"`
	}
	data, _ := os.ReadFile(filepath.Join(d.out, "result.json"))
	if json.Unmarshal(data, &res) != nil || res.PRURL != "https://github.com/octo/hello/pull/6" || res.CommentURL != ownComment("")["html_url"] {
		t.Errorf("result.json pr_url %q, comment_url %q; want the pull request's and the comment's:\n%s", res.PRURL, res.CommentURL, data)
	}
}

// TestExecCommentFails: the sticky comment cannot be posted at the start
// nor at the end (500): the run goes on, the pull request is opened, and
// the run ends delivery_failed with exit 3, an empty comment-url and the
// pull request's URL.
func TestExecCommentFails(t *testing.T) {
	d := newDeliveryRun(t, true)
	fail := githubtest.JSON(500, map[string]any{"message": "boom"})
	d.api.Register(http.MethodGet, commentsPath, fail).Times(6)
	d.api.Register(http.MethodGet, "/repos/octo/hello/pulls", githubtest.JSON(200, []any{}))
	d.api.Register(http.MethodPost, "/repos/octo/hello/pulls", githubtest.JSON(201,
		map[string]any{"number": 6, "html_url": "https://github.com/octo/hello/pull/6", "head": map[string]any{"ref": "runner/unit/pr-5"}}))
	err := d.exec(t)
	if ExitCode(err) != ExitInfra {
		t.Fatalf("exit %d (%v), want 3", ExitCode(err), err)
	}
	out := outputsMap(t, d.outputs)
	if out["status"] != "delivery_failed" || out["comment-url"] != "" || out["pr-url"] != "https://github.com/octo/hello/pull/6" {
		t.Errorf("outputs %v", out)
	}
	pubs := publishEvents(t, d, event.StatusDeliveryFailed)
	if len(pubs) != 3 || pubs[2].Target != event.PublishComment || pubs[2].OK {
		t.Errorf("publish events %+v", pubs)
	}
	if !strings.Contains(d.stderr.String(), "::warning title=runner%3A delivery::the sticky comment could not be started") {
		t.Errorf("no warning for the comment's start:\n%s", d.stderr.String())
	}
	if data, _ := os.ReadFile(filepath.Join(d.out, "result.json")); !strings.Contains(string(data), "the sticky comment could not be posted") {
		t.Errorf("result.json %s", data)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// allowAuthor answers the gate's permission check for alice, the author
// of the test pull requests: write access.
func allowAuthor(api *githubtest.Registry) {
	api.Register(http.MethodGet, "/repos/octo/hello/collaborators/alice/permission",
		githubtest.JSON(200, map[string]any{"permission": "write", "role_name": "write"})).AnyTimes(0)
}
