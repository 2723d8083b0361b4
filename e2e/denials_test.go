package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// denySpec allows reading and wc only: the model's rm is denied.
const denySpec = `version: 1
name: tidy
model: gpt-4.1-mini
prompt: Remove notes.txt.
permissions:
  read: allow
  bash: {"wc *": allow}
sandbox: {mode: off}
`

// TestDeniedRmIsInEveryOutput is the case of issue 17: the model's `rm
// notes.txt` is denied, then it claims "Removed notes.txt.". Through the
// built binary under GitHub Actions (a push: no API call): the file is
// still there, the exit is 1 (gave up after a denial), and result.json,
// summary.md, the step summary and the step outputs (denials,
// denials-json) each carry the denial with its tool, pattern, rule and
// step next to the false claim; github finalize gives the same outputs
// from the log.
func TestDeniedRmIsInEveryOutput(t *testing.T) {
	t.Parallel()
	_, repo := smallRepo(t)
	if err := os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(denySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"rm notes.txt"}`)}}.Reply(),
		llmtest.Turn{Text: "Removed notes.txt."}.Reply(),
	)
	dir := t.TempDir()
	eventPath, outputs, stepSummary := filepath.Join(dir, "push.json"), filepath.Join(dir, "output"), filepath.Join(dir, "summary")
	if err := os.WriteFile(eventPath, []byte(`{"ref":"refs/heads/main"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef", "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=push",
		"GITHUB_EVENT_PATH="+eventPath, "GITHUB_REPOSITORY=acme/app", "GITHUB_API_URL=http://127.0.0.1:1",
		"GITHUB_OUTPUT="+outputs, "GITHUB_STEP_SUMMARY="+stepSummary)
	out := filepath.Join(dir, "out")
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL())
	if res.code != 1 {
		t.Fatalf("exit %d, want 1 (gave up after a denial)\n%s", res.code, res.stderr)
	}
	if data, err := os.ReadFile(filepath.Join(repo, "notes.txt")); err != nil || string(data) != "keep me\n" {
		t.Fatalf("notes.txt = %q (%v): the denied rm ran", data, err)
	}

	want := event.PermissionDenied{Step: 1, Tool: "bash", Permission: "bash", Pattern: "rm notes.txt"}
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))
	fin := finished(t, recs)
	checkDenied(t, "run.finished", fin.Denials, fin.DeniedCalls, want)
	var result event.RunFinished
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil || json.Unmarshal(data, &result) != nil {
		t.Fatalf("result.json (%v):\n%s", err, data)
	}
	checkDenied(t, "result.json", result.Denials, result.DeniedCalls, want)
	if result.FinalMessage != "Removed notes.txt." || result.Status != event.StatusFailed ||
		result.Error == nil || result.Error.Class != event.ClassBlocked {
		t.Errorf("result.json: status %s, error %+v, final %q", result.Status, result.Error, result.FinalMessage)
	}

	for _, path := range []string{filepath.Join(out, "summary.md"), stepSummary} {
		md, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		note := "**Denied**: 1 call was refused by the permissions and did not run, whatever the final message says: `bash` `rm notes.txt` (default deny)."
		if !strings.Contains(string(md), note) || !strings.Contains(string(md), "| **Denials** | 1 |") {
			t.Errorf("%s does not say the rm was denied:\n%s", filepath.Base(path), md)
		}
	}

	checkDenialOutputs(t, "exec", readOutputs(t, outputs), want)
	finOut := filepath.Join(dir, "finalize-output")
	fenv := append(env[:len(env):len(env)], "RUNNER_COMMENT=false", "GITHUB_OUTPUT="+finOut, "GITHUB_STEP_SUMMARY=")
	if r := runRunner(t, repo, fenv, "github", "finalize", "--events", filepath.Join(out, "events.jsonl")); r.code != 0 {
		t.Fatalf("finalize exit %d\n%s", r.code, r.stderr)
	}
	checkDenialOutputs(t, "finalize", readOutputs(t, finOut), want)
}

// checkDenied checks a denial count and list against the one denial want
// (call id, reason aside).
func checkDenied(t *testing.T, where string, n int, calls []event.PermissionDenied, want event.PermissionDenied) {
	t.Helper()
	if n != 1 || len(calls) != 1 {
		t.Fatalf("%s: %d denials %+v, want 1", where, n, calls)
	}
	got := calls[0]
	if got.Step != want.Step || got.Tool != want.Tool || got.Permission != want.Permission || got.Pattern != want.Pattern ||
		got.Rule != nil || got.CallID == "" || !strings.Contains(got.Reason, "no rule allows") {
		t.Errorf("%s: denied call %+v, want %+v with the default deny", where, got, want)
	}
}

// checkDenialOutputs checks the denials and denials-json step outputs.
func checkDenialOutputs(t *testing.T, where string, outs map[string]string, want event.PermissionDenied) {
	t.Helper()
	var calls []event.PermissionDenied
	if err := json.Unmarshal([]byte(outs["denials-json"]), &calls); err != nil {
		t.Fatalf("%s: denials-json %q: %v", where, outs["denials-json"], err)
	}
	if outs["denials"] != "1" {
		t.Errorf("%s: denials output %q, want 1", where, outs["denials"])
	}
	checkDenied(t, where+" denials-json", len(calls), calls, want)
}

// readOutputs parses a GITHUB_OUTPUT file: NAME=VALUE lines and
// NAME<<DELIMITER blocks; a later value of a name wins.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok {
			var val []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				val = append(val, lines[i])
			}
			out[name] = strings.Join(val, "\n")
		} else if name, val, ok := strings.Cut(lines[i], "="); ok {
			out[name] = val
		}
	}
	return out
}
