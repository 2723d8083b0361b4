package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestAttackHugeCommentBody: a writer's comment of 2 MiB whose text holds
// workflow commands, control characters (NUL, ESC, CR) and a bidi
// override becomes the prompt ({{ .GitHub.CommentBody }}). The model gets
// it (the control: the channel carries the text) and repeats 128 KiB of
// it as its final message. The run succeeds, the comment holds the
// text's start and fits GitHub's 65,536 characters, the step summary its
// 1 MiB, and nothing of the text is a live workflow command on stdout or
// stderr.
func TestAttackHugeCommentBody(t *testing.T) {
	t.Parallel()
	var payload map[string]any
	if err := json.Unmarshal(readGateFile(t, "issue_comment.edited.json"), &payload); err != nil {
		t.Fatal(err)
	}
	body := "@runner fix it\r\n::error::pwned in the body\n##[set-output name=status;]pwned\n\x00\x1b[31m\u202e" +
		strings.Repeat("a long line of the comment 0123456789\n", 2<<20/38) + "\n::warning::pwned at the end\nend-marker"
	payload["comment"].(map[string]any)["body"] = body
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	_, repo := smallRepo(t)
	spec := filepath.Join(t.TempDir(), "task.yaml")
	mustWriteFile(t, spec, strings.Replace(smallSpec, "prompt: Make status.txt say fixed.", "prompt: \"{{ .GitHub.CommentBody }}\"", 1))
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed\n"}`)}}.Reply(),
		// The model repeats 128 KiB of it: the final message goes to every channel.
		llmtest.Turn{Text: "Done. You said:\n" + body[:128<<10] + "\n::warning::pwned in the reply\n"}.Reply())
	gh := newFakeGitHub(t)
	gh.perms["sample-author"] = "admin"
	a := newActionsRun(t, "issue_comment", string(data), gh.url(), "https://github.com",
		"GITHUB_TOKEN="+actToken, "GITHUB_ACTOR=sample-author", "RUNNER_TRIGGER=@runner", "RUNNER_COMMENT=true")
	res := runRunner(t, repo, a.env, "exec", spec, "--out", filepath.Join(t.TempDir(), "out"), "--base-url", srv.URL())
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%.3000s", res.code, res.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Raw), "end-marker") {
		t.Fatal("control: the model did not get the comment's text")
	}
	c := gh.commentBody()
	if !strings.Contains(c, "a long line of the comment") {
		t.Errorf("the comment lacks the final message:\n%.2000s", c)
	}
	if n := utf8.RuneCountInString(c); n > 65536 {
		t.Errorf("the comment has %d characters: GitHub takes 65,536", n)
	}
	if n := len(a.files(t)["GITHUB_STEP_SUMMARY"]); n == 0 || n > 1<<20 {
		t.Errorf("step summary of %d bytes, want 1..1 MiB", n)
	}
	for stream, text := range map[string]string{"stdout": res.stdout, "stderr": res.stderr} {
		for _, c := range liveCommands(stream, text) {
			if strings.Contains(c.line, "pwned") {
				t.Errorf("live workflow command from the comment on %s: %q", stream, c.line)
			}
		}
	}
}

// TestNullIssueBodyRendersEmpty: an issue opened without a body comes
// with "body": null; the prompt {{ .Event.issue.body }} renders it as
// nothing, and the model is not told "<no value>".
func TestNullIssueBodyRendersEmpty(t *testing.T) {
	t.Parallel()
	_, repo := smallRepo(t)
	spec := filepath.Join(t.TempDir(), "task.yaml")
	mustWriteFile(t, spec, strings.Replace(smallSpec, "prompt: Make status.txt say fixed.",
		"prompt: \"Issue: {{ .Event.issue.title }} [{{ .Event.issue.body }}]\"", 1))
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed\n"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply())
	gh := newFakeGitHub(t)
	gh.perms["sample-author"] = "admin"
	a := newActionsRun(t, "issues", string(readGateFile(t, "issues.null-body.json")), gh.url(), "https://github.com",
		"GITHUB_TOKEN="+actToken, "GITHUB_ACTOR=sample-author")
	res := runRunner(t, repo, a.env, "exec", spec, "--out", filepath.Join(t.TempDir(), "out"), "--base-url", srv.URL())
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", res.code, res.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model call")
	}
	if sent := string(reqs[0].Raw); !strings.Contains(sent, "Issue: Spelling error in the README file []") || strings.Contains(sent, "no value") {
		t.Errorf("the prompt sent:\n%.2000s", sent)
	}
}
