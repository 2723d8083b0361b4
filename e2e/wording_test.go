package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestConsoleSaysItOnce: a retry, a denial and a timeout each print one
// sentence on stderr, without the class, rule or subject said twice, and
// the event fields keep their full text.
func TestConsoleSaysItOnce(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	// bash is offered (a rule allows ls), so the call below is a denial.
	withBash := strings.Replace(smallSpec, "permissions:\n", "permissions:\n  bash: {\"ls\": allow}\n", 1)
	if err := os.WriteFile(spec, []byte(withBash), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	srv := newModel(t,
		llmtest.HTTPError(503, `{"error":{"message":"overloaded"}}`),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"rm -rf /"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply(),
	)
	out := t.TempDir()
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL())
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", res.code, res.stderr)
	}
	for _, want := range []string{
		"↻ retry 1/5 in ", ": provider error (retryable, HTTP 503) from POST " + srv.URL() + "/chat/completions: overloaded\n",
		`⊘ denied bash "rm -rf /": no rule allows it (default deny)` + "\n",
		"runner: check status failed (attempt 2 of 2)\n",
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	for _, bad := range []string{"retryable: provider", "(default deny: ", "run failed: "} {
		if strings.Contains(res.stderr, bad) {
			t.Errorf("stderr repeats itself (%q):\n%s", bad, res.stderr)
		}
	}
	for _, r := range readEvents(t, filepath.Join(out, "events.jsonl")) {
		if r.Type == "permission.denied" && !strings.Contains(string(r.Raw), `no rule allows bash \"rm -rf /\" (default deny)`) {
			t.Errorf("permission.denied lost its reason: %s", r.Raw)
		}
	}
	// Nothing changed: the empty patch file is written, result.json has no
	// patch path.
	var result struct {
		PatchPath string `json:"patch_path"`
	}
	if b, err := os.ReadFile(filepath.Join(out, "result.json")); err != nil || json.Unmarshal(b, &result) != nil || result.PatchPath != "" {
		t.Errorf("result.json %s (%v), want patch_path \"\"", b, err)
	}
	requireFiles(t, out, "changes.patch")
}

// TestTimeoutNamesItsLimit: a run cut by --timeout says which limit, its
// value and where it came from, and the cut step says why it ended. The
// timeout must land in step 1 (the stalled model call): 2 s leaves a
// loaded machine's start-up room (with 300 ms the test relied on a quick one).
func TestTimeoutNamesItsLimit(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	stall := llmtest.Turn{Text: "thinking"}.Reply()
	stall.Stall, stall.StallAfter = true, 2
	srv := newModel(t, stall)
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef")
	res := runRunner(t, repo, env, "exec", spec, "--out", t.TempDir(), "--base-url", srv.URL(), "--timeout", "2s")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", res.code, res.stderr)
	}
	for _, want := range []string{
		"step 1: cut short by the timeout",
		"runner: the run's timeout (2s, --timeout) was reached\n",
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if strings.Contains(res.stderr, "step 1: error") || strings.Contains(res.stderr, "timeout: the run") {
		t.Errorf("stderr has an unexplained or repeated timeout:\n%s", res.stderr)
	}
}
