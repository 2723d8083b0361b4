package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestNarrationIsNotAFinalAnswer: a replay that runs out after the second
// of the hello example's four turns (each of the two a sentence beside a
// tool call) ends with exit 2, and neither stdout nor result.json's
// final_message passes the narration off as the answer: a CI step that
// reads stdout gets nothing.
func TestNarrationIsNotAFinalAnswer(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "hello", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	short := filepath.Join(t.TempDir(), "short.jsonl")
	if err := os.WriteFile(short, []byte(strings.Join(lines[:2], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	args := append([]string{}, helloArgs[:len(helloArgs)-1]...)
	args = append(args, short, "--out", out)
	res := runRunner(t, repoRoot, baseEnv(t), args...)
	if res.code != 2 {
		t.Fatalf("exit %d, want 2 (the cassette ran out)\nstderr: %s", res.code, res.stderr)
	}
	if strings.TrimSpace(res.stdout) != "" {
		t.Errorf("stdout holds %q: narration beside a tool call is not a final answer", res.stdout)
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Status       string `json:"status"`
		FinalMessage string `json:"final_message"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.Status != "error" || r.FinalMessage != "" {
		t.Errorf("result.json status %q final_message %q: want error and no final message", r.Status, r.FinalMessage)
	}
}

// TestFailedRunFlagsItsFinalMessage: a run whose checks still fail prints
// the agent's last claim on stdout with a line before it saying the run
// did not succeed, so a reader of stdout alone is not told "fixed".
func TestFailedRunFlagsItsFinalMessage(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	srv := newModel(t, llmtest.Turn{Text: "Fixed the test so it passes."}.Reply(), llmtest.Turn{Text: "Fixed the test so it passes."}.Reply())
	res := runRunner(t, repo, append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef"),
		"exec", spec, "--out", t.TempDir(), "--base-url", srv.URL(), "--quiet")
	want := "runner: the run did not succeed (failed, exit 1): the agent's last message, unverified:\nFixed the test so it passes.\n"
	if res.code != 1 || res.stdout != want {
		t.Errorf("exit %d, stdout %q; want 1 and %q", res.code, res.stdout, want)
	}
}
