package e2e

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// actSetup is one self-test run's world: the workspace (a commit of this
// checkout), the fake model, the fake GitHub API and the git remote it
// pushes to.
type actSetup struct {
	ws, head string
	model    *llmtest.Server
	api      *githubtest.Registry
	remote   *gitRemote
	comment  sticky
	pullMu   sync.Mutex
	pull     map[string]any // the pull request as created (its JSON body)
}

func newActSetup(t *testing.T) *actSetup {
	t.Helper()
	s := &actSetup{}
	s.ws, s.head = actWorkspace(t)
	s.remote = newGitRemote(t, s.ws)
	s.api = githubtest.New(t, "/api/v3")
	// The gate checks the pull request's author (the event's sample-author).
	s.api.Register(http.MethodGet, "/repos/"+actOwner+"/"+actRepo+"/collaborators/"+actOwner+"/permission",
		githubtest.JSON(http.StatusOK, map[string]any{"permission": "admin", "role_name": "admin"})).AnyTimes(0)
	s.model = newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"hello.txt","content":"hello\n"}`)}}.Reply(),
		llmtest.Turn{Text: "Wrote hello.txt."}.Reply())
	return s
}

// run runs the self-test workflow with the task at path task of ws.
func (s *actSetup) run(t *testing.T, task string) actResult {
	t.Helper()
	return s.runVars(t, map[string]string{"TASK": task})
}

// runVars runs the self-test workflow with the variables vars.
func (s *actSetup) runVars(t *testing.T, vars map[string]string) actResult {
	t.Helper()
	return runAct(t, s.ws, vars, s.model.URL(), s.api.Server.URL+"/api/v3", s.remote.url)
}

// stubPulls registers the search for an open pull request of the branch
// (none) and its creation, answered by create, n times each.
func (s *actSetup) stubPulls(t *testing.T, n int, create githubtest.Responder) {
	t.Helper()
	pulls := "/repos/" + actOwner + "/" + actRepo + "/pulls"
	s.api.Register(http.MethodGet, pulls, githubtest.JSON(http.StatusOK, []any{})).
		WithQuery("head", actOwner+":"+actBranch).Times(n)
	s.api.Register(http.MethodPost, pulls, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("pull request body: %v", err)
		}
		s.pullMu.Lock()
		s.pull = body
		s.pullMu.Unlock()
		create(w, r)
	}).Times(n)
}

// pullRequest is the body of the last pull request creation.
func (s *actSetup) pullRequest() map[string]any {
	s.pullMu.Lock()
	defer s.pullMu.Unlock()
	return s.pull
}

// The act tests are not parallel: each builds the runner, and run alone
// (Go holds the parallel tests until the sequential ones are done) they
// do not slow the package's timing-sensitive fault tests.

// TestActionUnderAct runs action.yml end to end under nektos/act on the
// self-hosted platform: a workflow in a commit of this checkout checks it
// out (act copies the work tree), uses the action as `uses: ./` on the
// bundled pull_request payload, and a later step records the outputs and
// the toolchain. The action builds the runner from that commit; the fake
// model writes hello.txt; the runner comments on #2, pushes the branch
// over smart HTTP and opens the pull request.
func TestActionUnderAct(t *testing.T) {
	actBinary(t)
	s := newActSetup(t)
	s.comment.register(s.api, 1, 1, 1)
	s.stubPulls(t, 1, githubtest.JSON(http.StatusCreated, map[string]any{"number": 3,
		"html_url": "https://github.com/" + actOwner + "/" + actRepo + "/pull/3", "head": map[string]any{"ref": actBranch}}))
	res := s.run(t, ".github/runner/act.yaml")
	if res.code != 0 {
		t.Fatalf("act exited %d, want 0:\n%s", res.code, res.raw)
	}
	out := res.outputs(t)
	want := map[string]string{"status": "success", "exit-code": "0", "structured-output": "",
		"comment-url": "https://github.com/sample-author/Hello-World/pull/2#issuecomment-9",
		"pr-url":      "https://github.com/sample-author/Hello-World/pull/3"}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("output %s = %q, want %q (all: %v)", k, out[k], v, out)
		}
	}
	if !strings.HasSuffix(out["patch-path"], "/changes.patch") || !strings.HasSuffix(out["events-path"], "/events.jsonl") {
		t.Errorf("patch-path %q, events-path %q", out["patch-path"], out["events-path"])
	}
	if p := res.file(t, "changes.patch"); !strings.Contains(p, "+++ b/hello.txt") || !strings.Contains(p, "+hello") {
		t.Errorf("the patch at patch-path:\n%s", p)
	}
	if got := strings.TrimSpace(res.file(t, "outcome.txt")); got != "success" {
		t.Errorf("step outcome %q", got)
	}
	checkToolchainUnchanged(t, res)
	// No tag: go stamps a pseudo-version naming the checkout's commit.
	checkVersion(t, res, "-"+s.head[:12])

	// act parses ::notice but shows it as an unknown command (❓).
	if n := res.commands("notice"); len(n) != 1 || n[0].KV["title"] != "runner" || !strings.Contains(n[0].Arg, "✓ success") {
		t.Errorf("::notice lines %+v, want the result line", n)
	}
	if e := res.commands("error"); len(e) != 0 {
		t.Errorf("::error lines in a successful run: %+v", e)
	}
	checkSummary(t, res, "### ✅ runner: act — success", "| `hello.txt` | added | 1 | 0 |",
		"✅ pull request: https://github.com/sample-author/Hello-World/pull/3")
	started, edits := s.comment.bodies()
	if !strings.Contains(started, "<!--") || len(edits) != 1 || !strings.Contains(edits[0], "success") ||
		!strings.Contains(edits[0], "pull/3") {
		t.Errorf("sticky comment: started %q, edits %q", started, edits)
	}
	if pr := s.pullRequest(); pr["head"] != actBranch || pr["base"] != "master" {
		t.Errorf("pull request %v, want head %s against master", pr, actBranch)
	}
	if got := strings.TrimSpace(gittest.Run(t, s.remote.bare, "show", actBranch+":hello.txt")); got != "hello" {
		t.Errorf("pushed hello.txt = %q", got)
	}
	// The action's github-token input defaults to github.token.
	if got := s.comment.authorization(); got != "Bearer "+actToken {
		t.Errorf("comment created with Authorization %q, want the job's token", got)
	}
	if got := s.remote.pushAuths(); len(got) != 1 || got[0] != "x-access-token:"+actToken {
		t.Errorf("push credentials %q, want x-access-token and the job's token", got)
	}
	if msgs := s.model.Requests()[0].Messages(); !strings.Contains(msgs[len(msgs)-1]["content"].(string), "pull request 2") {
		t.Errorf("prompt %v, want the event's number rendered", msgs[len(msgs)-1])
	}
}

// TestActionUnderActDeliveryFails: the pull request API answers 500 (after
// the runner's retries). The agent's work succeeded but its delivery did
// not: the step fails with exit code 3, the outputs (from the finalize
// step) say delivery_failed with the comment's URL and no pull request's,
// act shows the error and warning annotations, and the sticky comment
// says the changes are ready but the pull request could not be opened.
// The checkout is tagged, and the runner reports the tag as its version.
func TestActionUnderActDeliveryFails(t *testing.T) {
	actBinary(t)
	s := newActSetup(t)
	gittest.Run(t, s.ws, "tag", "v0.9.7")
	s.comment.register(s.api, 2, 2, 2)
	s.stubPulls(t, 3, githubtest.Error(http.StatusInternalServerError, "boom"))
	res := s.run(t, ".github/runner/act.yaml")
	if res.code == 0 {
		t.Fatalf("act exited 0, want the job to fail:\n%s", res.raw)
	}
	out := res.outputs(t)
	if out["status"] != "delivery_failed" || out["exit-code"] != "3" || out["pr-url"] != "" ||
		out["comment-url"] != "https://github.com/sample-author/Hello-World/pull/2#issuecomment-9" {
		t.Errorf("outputs %v", out)
	}
	if got := strings.TrimSpace(res.file(t, "outcome.txt")); got != "failure" {
		t.Errorf("step outcome %q", got)
	}
	errs, warns := res.commands("error"), res.commands("warning")
	if len(errs) != 1 || errs[0].KV["title"] != "runner: delivery failed" {
		t.Errorf("::error annotations %+v, want one titled %q", errs, "runner: delivery failed")
	}
	if !hasAnnotation(warns, "runner: delivery", "pull request failed") {
		t.Errorf("::warning annotations %+v, want the pull request's failure", warns)
	}
	if _, edits := s.comment.bodies(); len(edits) == 0 ||
		!strings.Contains(edits[len(edits)-1], "changes ready, pull request could not be opened") {
		t.Errorf("sticky comment edits %q", edits)
	}
	checkToolchainUnchanged(t, res)
	checkVersion(t, res, "v0.9.7")
}

// checkSummary: act shows the step summary the runner wrote (once for the
// run step and again for the action's step, the same file), and it holds
// each of parts.
func checkSummary(t *testing.T, res actResult, parts ...string) {
	t.Helper()
	summaries := res.commands("summary")
	if len(summaries) == 0 {
		t.Errorf("act showed no step summary:\n%s", res.raw)
	}
	for _, sum := range summaries {
		for _, p := range parts {
			if !strings.Contains(sum.Content, p) {
				t.Errorf("step summary lacks %q:\n%s", p, sum.Content)
			}
		}
	}
}

// TestActionUnderActSpecError: a task spec with an unknown key fails the
// step before any model or API call, with exit code 2, the outputs
// status=error and exit-code=2, and an ::error annotation on the spec's
// file and line.
func TestActionUnderActSpecError(t *testing.T) {
	actBinary(t)
	s := newActSetup(t) // no GitHub stub: any API call fails the test
	res := s.run(t, ".github/runner/bad.yaml")
	if res.code == 0 {
		t.Fatalf("act exited 0, want the job to fail:\n%s", res.raw)
	}
	if out := res.outputs(t); out["status"] != "error" || out["exit-code"] != "2" {
		t.Errorf("outputs %v, want status error and exit-code 2", out)
	}
	errs := res.commands("error")
	found := false
	for _, e := range errs {
		found = found || e.KV["file"] == ".github/runner/bad.yaml" && e.KV["line"] == "7" && strings.Contains(e.Arg, "permisions")
	}
	if !found {
		t.Errorf("::error annotations %+v, want one on .github/runner/bad.yaml line 7 naming the key", errs)
	}
	if n := len(s.model.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
	checkToolchainUnchanged(t, res)
}

// TestActionUnderActUsageError: both the task and the prompt input is a
// usage error of the action's prepare step: its ::error, exit code 2, and
// the outputs status=error and exit-code=2 from that step (the action's
// outputs fall back to it), with no model or API call.
func TestActionUnderActUsageError(t *testing.T) {
	actBinary(t)
	s := newActSetup(t)
	res := s.runVars(t, map[string]string{"TASK": ".github/runner/act.yaml", "PROMPT": "Say hello."})
	if res.code == 0 {
		t.Fatalf("act exited 0, want the job to fail:\n%s", res.raw)
	}
	if out := res.outputs(t); out["status"] != "error" || out["exit-code"] != "2" || out["events-path"] != "" {
		t.Errorf("outputs %v, want status error and exit-code 2 only", out)
	}
	if errs := res.commands("error"); len(errs) != 1 || errs[0].KV["title"] != "runner" ||
		!strings.Contains(errs[0].Arg, "give either the task or the prompt input, not both") {
		t.Errorf("::error annotations %+v", errs)
	}
	if n := len(s.model.Requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}

func hasAnnotation(lines []actLine, title, message string) bool {
	for _, l := range lines {
		if l.KV["title"] == title && strings.Contains(l.Arg, message) {
			return true
		}
	}
	return false
}

// checkToolchainUnchanged: the step after the action sees the PATH, the
// go and the Go version the step before it saw, which are this process's.
func checkToolchainUnchanged(t *testing.T, res actResult) {
	t.Helper()
	before, after := res.file(t, "before.txt"), res.file(t, "after.txt")
	if before == "" || before != after {
		t.Errorf("toolchain before the action:\n%s\nafter it:\n%s", before, after)
	}
	goPath, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(after, "which-go="+goPath+"\n") {
		t.Errorf("after the action go is not %s:\n%s", goPath, after)
	}
}

// checkVersion: the runner's version, as `runner version` prints it in
// the log and as run.started records it, is want (or contains it, for a
// pseudo-version), and not a modified tree's.
func checkVersion(t *testing.T, res actResult, want string) {
	t.Helper()
	var version string
	for _, line := range strings.Split(res.file(t, "events.jsonl"), "\n") {
		var rec struct {
			Type          string `json:"type"`
			RunnerVersion string `json:"runner_version"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Type == (event.RunStarted{}).EventType() {
			version = rec.RunnerVersion
		}
	}
	if !strings.Contains(version, want) || strings.Contains(version, "dirty") {
		t.Errorf("run.started runner_version %q, want %q", version, want)
	}
	if !strings.Contains(res.rawOutput(), "runner "+version+"\n") {
		t.Errorf("`runner version` in the log does not print %q:\n%s", version, res.rawOutput())
	}
}
