package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// secretsSpec lets the agent cat files and edit anything; its check
// prints the planted file too.
const secretsSpec = `version: 1
name: secrets
model: gpt-4.1-mini
prompt: Look at the settings.
permissions:
  read: allow
  edit: {"**": allow}
  bash: {"cat *": allow}
checks:
  - {name: show, run: cat settings.txt}
`

// TestSecretsEveryPath plants an environment secret and a token shape in a
// file of the repository, has the agent cat it (the bash tool's output,
// the check's output), repeat it and write it into the tree, with
// --isolate and --record: the run fails on the patch (exit 1, secret
// gate), and neither value is in any file of the out dir (log, patch,
// result.json, summary.md, tool output, history), the cassette, stdout,
// stderr or anything the run left under its $TMPDIR (the --isolate copy,
// the sandbox's scratch).
func TestSecretsEveryPath(t *testing.T) {
	t.Parallel()
	const envSecret = "planted-Env-secret-5c1e77aa"
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "settings.txt"), []byte("service "+envSecret+"\nforge "+token+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, repo, "init", "-q", "-b", "main")
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "init")
	spec := filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(secretsSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"cat settings.txt"}`)}}.Reply(),
		llmtest.Turn{Text: "Found " + envSecret + " and " + token + ".",
			ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"leak.txt","content":"`+envSecret+` `+token+`\n"}`)}}.Reply(),
		llmtest.Turn{Text: "Wrote " + token + " to leak.txt."}.Reply(),
	)
	out := filepath.Join(t.TempDir(), "out")
	cassette := filepath.Join(t.TempDir(), "session.jsonl")
	tmp := t.TempDir()
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef", "SERVICE_TOKEN="+envSecret, "TMPDIR="+tmp)
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL(), "--isolate", "--record", cassette)
	if res.code != 1 || !strings.Contains(res.stderr, "secret") {
		t.Fatalf("exit %d, want 1 from the secret gate\n%s", res.code, res.stderr)
	}
	outputs := map[string]string{"stdout": res.stdout, "stderr": res.stderr}
	for name, content := range readTree(t, out) {
		outputs["out/"+name] = content
	}
	for name, content := range readTree(t, tmp) {
		outputs["tmp/"+name] = content
	}
	data, err := os.ReadFile(cassette)
	if err != nil {
		t.Fatalf("no cassette: %v", err)
	}
	outputs["cassette"] = string(data)
	for _, want := range []string{"out/events.jsonl", "out/changes.patch", "out/result.json", "out/summary.md"} {
		if _, ok := outputs[want]; !ok {
			t.Errorf("no %s", want)
		}
	}
	toolOutput := false
	for name, content := range outputs {
		toolOutput = toolOutput || strings.Contains(name, "tool-output")
		for _, s := range []string{envSecret, token, "sk-test-0123456789abcdef"} {
			if strings.Contains(content, s) {
				t.Errorf("%s holds the secret %q", name, s)
			}
		}
	}
	if !strings.Contains(outputs["cassette"], "[REDACTED]") || !strings.Contains(outputs["out/events.jsonl"], "[REDACTED]") {
		t.Error("the cassette or the log shows no redaction: did the secret reach them at all?")
	}
	if t.Failed() {
		t.Logf("files: %d, tool output among them: %v\nstderr:\n%s", len(outputs), toolOutput, res.stderr)
	}
}

// TestSecretNotInLastErrorLine: the error line the runner prints last on
// stderr names what the user typed (a path, a flag's value); a secret of
// the environment or a token shape in it is redacted, from a usage error
// after parsing and from a parse error alike.
func TestSecretNotInLastErrorLine(t *testing.T) {
	t.Parallel()
	const envSecret = "planted-Env-secret-9d2f01bb"
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	spec, repo := smallRepo(t)
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef", "SERVICE_TOKEN="+envSecret)
	for _, args := range [][]string{
		{"exec", spec, "--repo", filepath.Join(repo, "missing-"+envSecret)},
		{"exec", spec, "--max-steps", token},
	} {
		res := runRunner(t, repo, env, args...)
		if res.code != 2 || !strings.Contains(res.stderr, "[REDACTED]") {
			t.Errorf("%v: exit %d, want 2 with the secret redacted:\n%s", args[2:], res.code, res.stderr)
		}
		for _, s := range []string{envSecret, token} {
			if strings.Contains(res.stderr, s) {
				t.Errorf("%v: stderr holds %q:\n%s", args[2:], s, res.stderr)
			}
		}
	}
}
