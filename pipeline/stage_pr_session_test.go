package pipeline

import (
	"cmp"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// The repository of the issue_comment.created.pull_request.json case.
const (
	prOwner, prRepo = "sample-commenter", "github-workflow-event-json"
	prSelf          = "github-actions[bot]"
	prBranch        = "runner/issue-5"
)

const prSpec = `version: 1
name: fix-issue
model: gpt-4.1-mini
prompt: "Fix issue #{{ .GitHub.Number }}."
permissions:
  read: allow
  edit:
    "**": allow
limits:
  max_steps: 4
github:
  comment: true
  continue: true
  pull_request:
    branch: runner/issue-{{ .GitHub.Number }}
    title: "Fix #{{ .GitHub.Number }}"
`

// prFlow is a repository on a git server, a fake GitHub API with a
// stateful comment store, and the payloads of the case files.
type prFlow struct {
	t       *testing.T
	spec    string
	root    string // the git server's root
	remote  string // the bare repository
	gitURL  string
	api     *githubtest.Registry
	comment *githubtest.Comments
	prBody  string // the body the first run opened the pull request with
	final   string // the first run's final message ("": "Fixed it.")
}

func newPRFlow(t *testing.T) *prFlow {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	f := &prFlow{t: t, spec: filepath.Join(t.TempDir(), "task.yaml"), root: t.TempDir()}
	mustWrite(t, f.spec, prSpec)
	seed := filepath.Join(t.TempDir(), "seed")
	mustWrite(t, filepath.Join(seed, "README"), "unit\n")
	gittest.Run(t, seed, "init", "-q", "-b", "main")
	gittest.Run(t, seed, "add", "-A")
	gittest.Run(t, seed, "commit", "-q", "-m", "init")
	f.remote = filepath.Join(f.root, prOwner, prRepo+".git")
	gittest.Run(t, f.root, "clone", "-q", "--bare", seed, f.remote)
	gittest.Run(t, f.remote, "config", "http.receivepack", "true")
	f.gitURL = gitServer(t, f.root)
	f.api = githubtest.New(t, "/api/v3")
	f.comment = f.api.Comments(prOwner, prRepo, prSelf)
	return f
}

// checkout clones the remote at ref into a new work tree (a full clone,
// as actions/checkout with fetch-depth: 0).
func (f *prFlow) checkout(ref string) string {
	f.t.Helper()
	dir := filepath.Join(f.t.TempDir(), "wt")
	gittest.Run(f.t, filepath.Dir(dir), "clone", "-q", f.remote, dir)
	gittest.Run(f.t, dir, "checkout", "-q", ref)
	return dir
}

// payload is a case file with the issue number, the comment's body and
// author replaced.
func payload(t *testing.T, file string, number int, body, author string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "cases", "github-events", file))
	if err != nil {
		data, err = os.ReadFile(filepath.Join("/work/shared/cases/github-events", file))
	}
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	p["issue"].(map[string]any)["number"] = number
	cm := p["comment"].(map[string]any)
	cm["body"], cm["user"].(map[string]any)["login"] = body, author
	p["sender"].(map[string]any)["login"] = author
	out, _ := json.Marshal(p)
	return string(out)
}

// env is the Actions environment of workflow run runID for the event.
func (f *prFlow) env(eventName, payload, runID string) []string {
	f.t.Helper()
	dir := f.t.TempDir()
	eventPath := filepath.Join(dir, "event.json")
	mustWrite(f.t, eventPath, payload)
	return []string{
		"GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=" + prOwner + "/" + prRepo, "GITHUB_EVENT_NAME=" + eventName,
		"GITHUB_EVENT_PATH=" + eventPath, "GITHUB_API_URL=" + f.api.Server.URL + "/api/v3", "GITHUB_SERVER_URL=" + f.gitURL,
		"GITHUB_RUN_ID=" + runID, "GITHUB_OUTPUT=" + filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "summary"),
		"GITHUB_TOKEN=ghs_0123456789abcdefghijklmnopqrstuvwx", "RUNNER_GITHUB_LOGIN=" + prSelf, "RUNNER_TRIGGER=@runner",
		"RUNNER_HISTORY_ARTIFACT=runner-history-" + runID, "RUNNER_TEMP=" + dir, "GITHUB_REF=refs/heads/main",
	}
}

func (f *prFlow) exec(repo, out string, env []string, srv *llmtest.Server) (Result, string, error) {
	f.t.Helper()
	r := testRun{specFile: f.spec, repo: repo, out: out, srv: srv, noLog: true,
		opts: func(o *ExecOptions) { o.Environ, o.Quiet = env, false }}.exec(f.t)
	return r.res, r.stderr, r.err
}

// allow answers the gate's permission check for user.
func (f *prFlow) allow(user, level string) {
	f.api.Register(http.MethodGet, "/repos/"+prOwner+"/"+prRepo+"/collaborators/"+user+"/permission",
		githubtest.JSON(200, map[string]any{"permission": level, "role_name": level}))
}

// pullRequest answers GET pulls/6: the pull request the first run opened.
func (f *prFlow) pullRequest(head, author, body string) {
	f.pullRequestFrom(prOwner+"/"+prRepo, head, author, body)
}

// pullRequestFrom is pullRequest with the head in repository headRepo.
func (f *prFlow) pullRequestFrom(headRepo, head, author, body string) {
	f.api.Register(http.MethodGet, "/repos/"+prOwner+"/"+prRepo+"/pulls/6", githubtest.JSON(200, map[string]any{
		"number": 6, "body": body, "user": map[string]any{"login": author},
		"html_url": "https://github.com/" + prOwner + "/" + prRepo + "/pull/6",
		"head":     map[string]any{"ref": prBranch, "sha": head, "repo": map[string]any{"full_name": headRepo}},
		"base":     map[string]any{"ref": "main"}}))
}

// artifact serves out dir out as the history artifact of workflow run id.
func (f *prFlow) artifact(out string, id int64, name string, expired bool) {
	f.t.Helper()
	files := map[string]string{}
	for _, n := range historyFiles() {
		if b, err := os.ReadFile(filepath.Join(out, n)); err == nil {
			files[n] = string(b)
		}
	}
	f.api.Artifact(prOwner, prRepo, githubtest.Artifact{ID: id * 10, Name: name, WorkflowRun: id, Expired: expired,
		Zip: githubtest.Zip(f.t, files)})
}

// firstRun: "@runner fix this" on issue 5 opens pull request 6 from
// runner/issue-5, with the markers in its body and the conversation's
// comment on it.
func (f *prFlow) firstRun() (out, head string, srv *llmtest.Server) {
	t := f.t
	f.allow("sample-author", "write")
	f.api.Register(http.MethodGet, "/repos/"+prOwner+"/"+prRepo+"/pulls", githubtest.JSON(200, []any{})).WithQuery("head", prOwner+":"+prBranch)
	var created map[string]any
	f.api.Register(http.MethodPost, "/repos/"+prOwner+"/"+prRepo+"/pulls", githubtest.Capture(t, &created, githubtest.JSON(201,
		map[string]any{"number": 6, "html_url": "https://github.com/" + prOwner + "/" + prRepo + "/pull/6", "head": map[string]any{"ref": prBranch}})))
	repo := f.checkout("main")
	out = filepath.Join(t.TempDir(), "run1")
	srv = newModel(t, writeFileTurn("fix.txt", "fixed\n"), llmtest.Turn{Text: cmp.Or(f.final, "Fixed it.")}.Reply())
	res, stderr, err := f.exec(repo, out, f.env("issue_comment", payload(t, "issue_comment.created.issue.json", 5, "@runner fix this", "sample-author"), "7"), srv)
	if err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("run 1: %v %+v\n%s", err, res, stderr)
	}
	f.prBody, _ = created["body"].(string)
	if !github.OpenedFor(f.prBody, "fix-issue") {
		t.Fatalf("pull request body without the runner's marker:\n%s", f.prBody)
	}
	if ref, ok := github.FindHistoryRef(f.prBody); !ok || ref.WorkflowRun != 7 || ref.Artifact != "runner-history-7" || ref.RunID != res.RunID {
		t.Fatalf("pull request body's history marker %+v %v:\n%s", ref, ok, f.prBody)
	}
	head = gittest.Run(t, f.remote, "rev-parse", prBranch)
	return out, head, srv
}

// prComment is the conversation's sticky comment on the pull request.
func (f *prFlow) prComment() githubtest.Comment {
	f.t.Helper()
	var found []githubtest.Comment
	for _, c := range f.comment.On(6) {
		if c.User == prSelf && strings.HasPrefix(c.Body, github.Marker("fix-issue")) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		f.t.Fatalf("%d conversation comments on the pull request, want 1: %+v", len(found), found)
	}
	return found[0]
}

func startedOf(t *testing.T, out string) event.RunStarted {
	t.Helper()
	var rs event.RunStarted
	if err := firstRecord(t, out, "run.started").Decode(&rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestPRCommentContinues: a first run opens a pull request; a follow-up
// "@runner …" comment on it (the case payload's shape) continues the
// conversation from the history artifact of the first workflow run: the
// second run's first request starts with the first run's last request,
// its commit goes on top of the pull request's branch (no new pull
// request), and the same comment is edited to show the chain.
func TestPRCommentContinues(t *testing.T) {
	f := newPRFlow(t)
	out1, head1, srv1 := f.firstRun()
	first := f.prComment()
	if ref, ok := github.FindHistoryRef(first.Body); !ok || ref.Artifact != "runner-history-7" ||
		!strings.Contains(first.Body, "1 (this run)](") || !strings.Contains(first.Body, "| Fix issue #5. | success | 1 file, +1 −0 |") {
		t.Fatalf("the first run's comment on the pull request:\n%s", first.Body)
	}

	f.allow("sample-commenter", "write")
	f.pullRequest(head1, prSelf, f.prBody)
	f.artifact(out1, 7, "runner-history-7", false)
	repo := f.checkout(prBranch)
	out2 := filepath.Join(t.TempDir(), "run2")
	srv2 := newModel(t, writeFileTurn("empty.txt", "handled\n"), llmtest.Turn{Text: "Handled the empty list."}.Reply())
	ask := "@runner also handle the empty list"
	res, stderr, err := f.exec(repo, out2, f.env("issue_comment", payload(t, "issue_comment.created.pull_request.json", 6, ask, "sample-commenter"), "8"), srv2)
	if err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("run 2: %v %+v\n%s", err, res, stderr)
	}
	// The conversation went on: run 1's last request is the prefix.
	last1 := rawMessages(t, srv1.Requests()[len(srv1.Requests())-1])
	first2 := rawMessages(t, srv2.Requests()[0])
	if len(first2) != len(last1)+2 || first2[len(first2)-2] == "" || !strings.Contains(first2[len(first2)-2], ask) {
		t.Fatalf("run 2's first request has %d messages (run 1's last %d); new message %s", len(first2)-1, len(last1)-1, first2[len(first2)-2])
	}
	for i := range len(last1) - 1 {
		if first2[i] != last1[i] {
			t.Fatalf("run 2 message %d differs from run 1's", i)
		}
	}
	rs := startedOf(t, out2)
	// The checkout is the tree run 1 left and holds its base: nothing forced.
	if rs.Continues == nil || rs.Continues.Forced || rs.PullRequest == nil || !rs.PullRequest.Continued || rs.PullRequest.Number != 6 ||
		rs.PullRequest.Branch != prBranch || rs.PullRequest.History != "runner-history-7" {
		t.Errorf("run.started continues %+v pull_request %+v", rs.Continues, rs.PullRequest)
	}
	// The commit is on the pull request's branch, on top of run 1's.
	if parent := gittest.Run(t, f.remote, "rev-parse", prBranch+"^"); parent != head1 {
		t.Errorf("branch parent %s, want run 1's commit %s", parent, head1)
	}
	if got := gittest.Run(t, f.remote, "show", prBranch+":empty.txt"); got != "handled" {
		t.Errorf("empty.txt on the branch = %q", got)
	}
	if got := gittest.Run(t, f.remote, "show", prBranch+":fix.txt"); got != "fixed" {
		t.Errorf("fix.txt on the branch = %q", got)
	}
	// The same comment, edited: the chain of two runs, the new marker.
	c := f.prComment()
	if c.ID != first.ID || c.Edits == 0 {
		t.Errorf("comment %d (edits %d), want comment %d edited", c.ID, c.Edits, first.ID)
	}
	for _, want := range []string{"**Conversation** (2 runs)", "| Fix issue #5. | success | 1 file, +1 −0 |",
		"2 (this run)](", "| @runner also handle the empty list | success | 1 file, +1 −0 |", "Handled the empty list."} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("comment lacks %q:\n%s", want, c.Body)
		}
	}
	if ref, ok := github.FindHistoryRef(c.Body); !ok || ref.WorkflowRun != 8 || ref.Artifact != "runner-history-8" || ref.RunID != res.RunID {
		t.Errorf("comment's history marker %+v, want run 2's", ref)
	}
	// changes.patch is the whole conversation's, run.patch run 2's alone.
	if b, _ := os.ReadFile(filepath.Join(out2, "changes.patch")); !strings.Contains(string(b), "fix.txt") || !strings.Contains(string(b), "empty.txt") {
		t.Errorf("changes.patch:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(out2, "run.patch")); strings.Contains(string(b), "fix.txt") || !strings.Contains(string(b), "empty.txt") {
		t.Errorf("run.patch:\n%s", b)
	}
}

// TestPRCommentStartsFresh: when the history cannot be had (the artifact
// expired; a pull request the runner did not open), the run starts fresh
// from the pull request's head with the comment as its prompt, says so in
// run.started, a ::notice and the comment, and still pushes its commit on
// the pull request's branch.
func TestPRCommentStartsFresh(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		setup     func(f *prFlow, out1, head1 string)
	}{
		{"expired", "could not be fetched", func(f *prFlow, out1, head1 string) {
			f.pullRequest(head1, prSelf, f.prBody)
			f.artifact(out1, 7, "runner-history-7", true)
		}},
		{"not opened by the runner", "was not opened by the runner", func(f *prFlow, _, head1 string) {
			f.pullRequest(head1, "sample-author", "My own change.")
		}},
		{"fork", "its head is in a fork (someone/fork)", func(f *prFlow, _, head1 string) {
			f.pullRequestFrom("someone/fork", head1, "someone", "From my fork.")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newPRFlow(t)
			out1, head1, _ := f.firstRun()
			first := f.prComment()
			f.allow("sample-commenter", "write")
			tc.setup(f, out1, head1)
			repo := f.checkout(prBranch)
			out2 := filepath.Join(t.TempDir(), "run2")
			srv := newModel(t, writeFileTurn("empty.txt", "handled\n"), llmtest.Turn{Text: "Handled."}.Reply())
			ask := "@runner also handle the empty list"
			res, stderr, err := f.exec(repo, out2, f.env("issue_comment", payload(t, "issue_comment.created.pull_request.json", 6, ask, "sample-commenter"), "8"), srv)
			if err != nil || res.Status != event.StatusSuccess {
				t.Fatalf("run 2: %v %+v\n%s", err, res, stderr)
			}
			rs := startedOf(t, out2)
			if rs.Continues != nil || rs.PullRequest == nil || rs.PullRequest.Continued || !strings.Contains(rs.PullRequest.Fresh, tc.why) {
				t.Errorf("run.started continues %+v pull_request %+v, want fresh because it %s", rs.Continues, rs.PullRequest, tc.why)
			}
			if !strings.Contains(stderr, "::notice title=runner%3A starting fresh::pull request #6: ") {
				t.Errorf("no ::notice on stderr:\n%s", stderr)
			}
			msgs := srv.Requests()[0].Messages()
			if len(msgs) != 2 {
				t.Fatalf("a fresh run's first request has %d messages, want the system prompt and the comment", len(msgs))
			}
			if p, _ := msgs[1]["content"].(string); !strings.Contains(p, "pull request #6 (branch "+prBranch+")") || !strings.Contains(p, ask) ||
				!strings.Contains(p, tc.why) {
				t.Errorf("prompt %q", p)
			}
			switch parent := gittest.Run(t, f.remote, "rev-parse", prBranch+"^"); {
			case tc.name == "fork": // the token cannot push to a fork: nothing is pushed, and that is said
				if head := gittest.Run(t, f.remote, "rev-parse", prBranch); head != head1 || !strings.Contains(stderr, "::notice title=runner%3A not pushed::") {
					t.Errorf("fork: branch at %s (want %s untouched); stderr:\n%s", head, head1, stderr)
				}
			case parent != head1:
				t.Errorf("branch parent %s, want the pull request's head %s", parent, head1)
			}
			if b, _ := os.ReadFile(filepath.Join(out2, "changes.patch")); strings.Contains(string(b), "fix.txt") || !strings.Contains(string(b), "empty.txt") {
				t.Errorf("a fresh run's patch is its own change from the head:\n%s", b)
			}
			c := f.prComment()
			if c.ID != first.ID || !strings.Contains(c.Body, "Started fresh from the pull request's head: ") || !strings.Contains(c.Body, tc.why) ||
				!strings.Contains(c.Body, "**Conversation** (1 run)") {
				t.Errorf("comment %d (want %d):\n%s", c.ID, first.ID, c.Body)
			}
		})
	}
}

// TestPRCommentGateRefuses: a comment by someone without write access
// does nothing: no model call, no push, no comment, status refused.
func TestPRCommentGateRefuses(t *testing.T) {
	f := newPRFlow(t)
	_, head1, _ := f.firstRun()
	before := f.comment.On(6)
	f.allow("sample-commenter", "read")
	f.pullRequest(head1, prSelf, f.prBody)
	repo := f.checkout(prBranch)
	out := filepath.Join(t.TempDir(), "run2")
	srv := newModel(t)
	env := f.env("issue_comment", payload(t, "issue_comment.created.pull_request.json", 6, "@runner delete everything", "sample-commenter"), "8")
	res, stderr, err := f.exec(repo, out, env, srv)
	if err != nil || res.Reported {
		t.Fatalf("refused run: %v %+v\n%s", err, res, stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model calls", n)
	}
	if got := gittest.Run(t, f.remote, "rev-parse", prBranch); got != head1 {
		t.Errorf("branch moved to %s", got)
	}
	if after := f.comment.On(6); len(after) != len(before) || after[0].Body != before[0].Body {
		t.Errorf("comments changed: %+v", after)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("out dir written: %v", err)
	}
	var outputs string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GITHUB_OUTPUT="); ok {
			b, _ := os.ReadFile(v)
			outputs = string(b)
		}
	}
	if !strings.Contains(outputs, "refused") {
		t.Errorf("outputs %q, want status refused", outputs)
	}
}

// TestPRCommentAfterHumanPush: someone pushed to the pull request's branch
// after the first run. The conversation still goes on (the checkout is
// the truth), the comment says the tree changed since, and the commit
// goes on top of their commit.
func TestPRCommentAfterHumanPush(t *testing.T) {
	f := newPRFlow(t)
	out1, _, _ := f.firstRun()
	human := f.checkout(prBranch)
	mustWrite(t, filepath.Join(human, "NOTES"), "by hand\n")
	gittest.Run(t, human, "add", "NOTES")
	gittest.Run(t, human, "commit", "-q", "-m", "notes")
	gittest.Run(t, human, "push", "-q", "origin", "HEAD:"+prBranch)
	head := gittest.Run(t, human, "rev-parse", "HEAD")

	f.allow("sample-commenter", "write")
	f.pullRequest(head, prSelf, f.prBody)
	f.artifact(out1, 7, "runner-history-7", false)
	repo := f.checkout(prBranch)
	out2 := filepath.Join(t.TempDir(), "run2")
	srv := newModel(t, writeFileTurn("empty.txt", "handled\n"), llmtest.Turn{Text: "Handled."}.Reply())
	res, stderr, err := f.exec(repo, out2, f.env("issue_comment", payload(t, "issue_comment.created.pull_request.json", 6, "@runner go on", "sample-commenter"), "8"), srv)
	if err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("run 2: %v %+v\n%s", err, res, stderr)
	}
	if rs := startedOf(t, out2); rs.Continues == nil || !rs.Continues.Forced || !rs.PullRequest.Continued {
		t.Errorf("run.started continues %+v pull_request %+v, want a forced continue", rs.Continues, rs.PullRequest)
	}
	if parent := gittest.Run(t, f.remote, "rev-parse", prBranch+"^"); parent != head {
		t.Errorf("branch parent %s, want the human commit %s", parent, head)
	}
	if got := gittest.Run(t, f.remote, "show", prBranch+":NOTES"); got != "by hand" {
		t.Errorf("NOTES = %q: the human commit was dropped", got)
	}
	if c := f.prComment(); !strings.Contains(c.Body, "although the work tree changed since the run ended") {
		t.Errorf("comment does not say the tree changed:\n%s", c.Body)
	}
}
