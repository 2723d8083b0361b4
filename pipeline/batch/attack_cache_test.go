package batch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestAttackBatchCacheHidesOtherRepos (each run's sandbox
// hides the batch's clone cache and the other work dirs): repository
// "victim" has a committed, protected .env; repository "attacker" runs
// `bash attack.sh`, which reads the victim's blob from the batch's clone
// cache (git --git-dir=<cache>/clones/victim.git show HEAD:.env, and the
// earlier layout's <cache>/victim.git). The victim's
// value must not reach the model (it did, raw, and the attacker's log: its
// redactor knows only its own values).
func TestAttackBatchCacheHidesOtherRepos(t *testing.T) {
	t.Run("sandbox on", func(t *testing.T) { attackBatchCache(t, "", false) })
	// Control: with the sandbox off the same script reads the victim's
	// .env, so the attack reaches the cache where the guard is on.
	t.Run("control: sandbox off", func(t *testing.T) { attackBatchCache(t, "sandbox:\n  mode: off\n", true) })
}

// attackBatchCache runs the attack with the task's extra settings and
// checks whether the victim's value reached the attacker's model.
func attackBatchCache(t *testing.T, extra string, leaks bool) {
	t.Helper()
	const secret = "victim-dotenv-secret-4242abcd"
	dir := t.TempDir()
	gittest.Init(t, filepath.Join(dir, "victim"), map[string]string{"README.md": "victim\n", ".env": "VICTIM_TOKEN=" + secret + "\n"})
	gittest.Init(t, filepath.Join(dir, "attacker"), map[string]string{"README.md": "attacker\n",
		"attack.sh": "for d in ../../../*.git ../../../clones/*.git; do echo \"$d: $(git --git-dir=\"$d\" show HEAD:.env 2>&1)\"; done\n"})
	write(t, filepath.Join(dir, "task.yaml"), "version: 1\nname: t\nmodel: gpt-4.1-mini\nprompt: hi\npermissions:\n  read: allow\n  bash: {\"bash attack.sh\": allow}\n"+extra)
	spec := filepath.Join(dir, "batch.yaml")
	write(t, spec, "version: 1\nname: rt\ntask: task.yaml\nrepos:\n  - path: victim\n  - path: attacker\n")
	srv := llmtest.NewServer(t, llmtest.Turn{Text: "Nothing to do."}.Reply(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"bash attack.sh"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply())
	out, cache := filepath.Join(dir, "out"), filepath.Join(dir, "cache")
	if _, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, CacheDir: cache, RetryBackoff: time.Millisecond, Concurrency: 1,
		Executor: &PipelineExecutor{BaseURL: srv.URL(), APIKey: "sk-test-0123456789abcdef", Environ: []string{"PATH=" + os.Getenv("PATH")}}}); err != nil {
		t.Fatal(err)
	}
	var results strings.Builder
	for _, req := range srv.Requests() {
		for _, m := range req.Messages() {
			if m["role"] == "tool" {
				c, _ := m["content"].(string)
				results.WriteString(c + "\n")
			}
		}
	}
	if !strings.Contains(results.String(), ".git: ") {
		t.Fatalf("attack.sh did not run or found no cache entry: tool results %q", results.String())
	}
	if leaks {
		if !strings.Contains(results.String(), secret) {
			t.Errorf("control: with the sandbox off the attack did not read the victim's .env:\n%s", results.String())
		}
		return
	}
	if strings.Contains(results.String(), secret) {
		t.Errorf("the victim repository's protected .env reached the attacker's model through the clone cache:\n%s", results.String())
	}
	if b, _ := os.ReadFile(filepath.Join(out, "attacker", "events.jsonl")); strings.Contains(string(b), secret) {
		t.Errorf("the victim's value is in the attacker's event log")
	}
}
