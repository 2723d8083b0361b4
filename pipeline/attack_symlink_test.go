package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestExecSymlinkOutOfTree: a command (allowed, sandboxed) links a file
// outside the work tree into it, and the model then reads, greps and
// edits through the link with the runner's own tools, which run outside
// the sandbox: the permission check resolves the link and denies every
// call (external_directory), so the outside file's content never reaches
// the log and the outside file is unchanged.
func TestExecSymlinkOutOfTree(t *testing.T) {
	if _, err := os.Stat("/usr/bin/make"); err != nil {
		t.Skip("make is not installed")
	}
	outside := filepath.Join(t.TempDir(), "id_rsa")
	const content = "outside-content-4f1e2d9c"
	mustWrite(t, outside, content+"\n")
	repo := gittest.Repo(t, map[string]string{"Makefile": "all:\n\tln -s " + outside + " key\n\tln -s " + filepath.Dir(outside) + " dir\n"})
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	spec := filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, spec, gateSpec)
	srv := newModel(t, makeTurn(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("read", `{"path":"key"}`)}}.Reply(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("read", `{"path":"dir/id_rsa"}`)}}.Reply(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("grep", `{"pattern":"outside-content","path":"dir"}`)}}.Reply(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"key","content":"overwritten\n"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply())
	out := t.TempDir()
	var stderr bytes.Buffer
	_, _ = Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Stderr: &stderr, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	data, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if n := strings.Count(string(data), "external_directory"); n < 4 {
		t.Errorf("%d denials name external_directory, want one per call through the links (4)", n)
	}
	if strings.Contains(string(data), content) {
		t.Errorf("the outside file's content reached the log through the link")
	}
	for _, req := range srv.Requests() {
		if strings.Contains(string(req.Raw), content) {
			t.Errorf("the outside file's content was sent to the model")
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != content+"\n" {
		t.Errorf("the outside file was changed through the link: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(repo, "key")); err != nil {
		t.Errorf("the command did not make the link (the test proves nothing): %v", err)
	}
}
