package pipeline

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// actionsEnv is a GitHub Actions environment for an event whose payload
// is written to a file; the API is a fake that fails on any request not
// stubbed.
func actionsEnv(t *testing.T, eventName, payload string, extra ...string) (env []string, outputs, summary string) {
	t.Helper()
	dir := t.TempDir()
	eventPath, outputs, summary := filepath.Join(dir, "event.json"), filepath.Join(dir, "output"), filepath.Join(dir, "summary")
	mustWrite(t, eventPath, payload)
	api := githubtest.New(t, "")
	env = append([]string{
		"GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=octo/hello", "GITHUB_EVENT_NAME=" + eventName,
		"GITHUB_EVENT_PATH=" + eventPath, "GITHUB_API_URL=" + api.Server.URL, "GITHUB_SERVER_URL=https://github.com",
		"GITHUB_RUN_ID=7", "GITHUB_OUTPUT=" + outputs, "GITHUB_STEP_SUMMARY=" + summary,
		"GITHUB_TOKEN=ghs_0123456789abcdefghijklmnopqrstuvwx", "RUNNER_GITHUB_LOGIN=github-actions[bot]",
	}, extra...)
	return env, outputs, summary
}

// TestExecInActions: a push event in Actions renders the prompt with
// {{ .GitHub.… }}, writes the step outputs and the step summary, and makes
// no API call (no issue or pull request to comment on).
func TestExecInActions(t *testing.T) {
	spec, repo := execFixture(t)
	mustWrite(t, spec, strings.Replace(runSpec, "prompt: Write hello.txt.", "prompt: Write hello.txt in {{ .GitHub.Repository }}.", 1))
	env, outputs, summary := actionsEnv(t, "push", `{"ref":"refs/heads/main"}`)
	srv := newModel(t, llmtest.Turn{Text: "Nothing to write."}.Reply())
	out := t.TempDir()
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].Messages()
	if got, _ := msgs[len(msgs)-1]["content"].(string); !strings.Contains(got, "Write hello.txt in octo/hello.") {
		t.Errorf("prompt %q, want the repository rendered in", got)
	}
	o, err := os.ReadFile(outputs)
	if err != nil || !strings.Contains(string(o), "success") || !strings.Contains(string(o), filepath.Join(out, "events.jsonl")) {
		t.Errorf("outputs %q (%v)", o, err)
	}
	if s, err := os.ReadFile(summary); err != nil || !strings.Contains(string(s), "success") {
		t.Errorf("summary %q (%v)", s, err)
	}
	// Nothing changed: patch-path is empty, as action.yml documents, and
	// result.json agrees; the empty patch file is still written.
	if !strings.Contains(string(o), "patch-path") || strings.Contains(string(o), "changes.patch") {
		t.Errorf("outputs %q, want an empty patch-path", o)
	}
	var res struct {
		PatchPath    *string `json:"patch_path"`
		FilesChanged int     `json:"files_changed"`
	}
	if b, err := os.ReadFile(filepath.Join(out, "result.json")); err != nil || json.Unmarshal(b, &res) != nil ||
		res.PatchPath == nil || *res.PatchPath != "" || res.FilesChanged != 0 {
		t.Errorf("result.json %s (%v), want patch_path \"\" and files_changed 0", b, err)
	}
	if fi, err := os.Stat(filepath.Join(out, "changes.patch")); err != nil || fi.Size() != 0 {
		t.Errorf("changes.patch: %v, want an empty file", err)
	}
}

// TestExecGateClosed: a comment without the trigger phrase makes no model
// call, writes no out dir, exits 0 and says "skipped" in the outputs.
func TestExecGateClosed(t *testing.T) {
	spec, repo := execFixture(t)
	payload := `{"action":"created","issue":{"number":5,"title":"x"},"comment":{"id":1,"body":"just chatting",` +
		`"user":{"login":"alice","type":"User"}},"sender":{"login":"alice","type":"User"}}`
	env, outputs, _ := actionsEnv(t, "issue_comment", payload, "RUNNER_TRIGGER=@runner")
	srv := newModel(t)
	out := filepath.Join(t.TempDir(), "out")
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(),
		APIKey: "sk-unit-0123456789abcdef", Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model calls, want none", n)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("out dir written: %v", err)
	}
	if o, err := os.ReadFile(outputs); err != nil || !strings.Contains(string(o), "skipped") {
		t.Errorf("outputs %q (%v)", o, err)
	}
}

// TestExecStickyComment: on a pull request event with RUNNER_COMMENT=true
// the run posts its sticky comment when it starts and edits it with the
// report when it ends.
func TestExecStickyComment(t *testing.T) {
	spec, repo := execFixture(t)
	payload := `{"action":"opened","number":5,"pull_request":{"number":5,"user":{"login":"alice"},"title":"t","head":{"ref":"f","sha":"abc",` +
		`"repo":{"full_name":"octo/hello"}},"base":{"ref":"main"}},"sender":{"login":"alice","type":"User"}}`
	env, _, _ := actionsEnv(t, "pull_request", payload, "RUNNER_COMMENT=true")
	api := githubtest.New(t, "/api/v3")
	allowAuthor(api)
	for i, kv := range env {
		if strings.HasPrefix(kv, "GITHUB_API_URL=") {
			env[i] = "GITHUB_API_URL=" + api.Server.URL + "/api/v3"
		}
	}
	const comments = "/repos/octo/hello/issues/5/comments"
	api.Register(http.MethodGet, comments, githubtest.Page([]any{}, 1, 1))
	var started, finished struct{ Body string }
	own := func(body string) map[string]any {
		return map[string]any{"id": 9, "body": body, "user": map[string]any{"login": "github-actions[bot]"},
			"html_url": "https://github.com/octo/hello/pull/5#issuecomment-9"}
	}
	api.Register(http.MethodPost, comments, githubtest.Capture(t, &started, githubtest.JSON(201, own("x"))))
	api.Register(http.MethodGet, comments, func(w http.ResponseWriter, r *http.Request) {
		githubtest.Page([]any{own(started.Body)}, 1, 1)(w, r)
	})
	api.Register(http.MethodPatch, "/repos/octo/hello/issues/comments/9", githubtest.Capture(t, &finished, githubtest.JSON(200, own("y"))))
	srv := newModel(t, llmtest.Turn{Text: "All good."}.Reply())
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(started.Body, "<!--") || !strings.Contains(finished.Body, "success") || !strings.Contains(finished.Body, "All good.") {
		t.Errorf("comment started %q, finished %q", started.Body, finished.Body)
	}
}
