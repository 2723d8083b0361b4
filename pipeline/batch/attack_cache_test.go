package batch

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/tools/sandbox"
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

// TestAttackBatchCacheObjects: a job's command appends to every file
// under the work tree's .git/objects (Landlock only leaves .git
// writable). Those files were hard links to the clone cache's, so the
// write reached the cache every later job of the repository is copied
// from. Now the cache is unchanged under every layer set; the control
// (linkCachedObjects on) shows the write reaching it.
func TestAttackBatchCacheObjects(t *testing.T) {
	for _, pin := range []string{"landlock", "namespaces", "off"} {
		t.Run(pin, func(t *testing.T) {
			if pin != "off" && !layerAvailable(pin) {
				t.Skipf("layer %s is not available here", pin)
			}
			if got := attackCacheObjects(t, pin); len(got) > 0 {
				t.Errorf("a job's command wrote into the clone cache: %q", got)
			}
		})
	}
	t.Run("control: hard links", func(t *testing.T) {
		linkCachedObjects = true
		defer func() { linkCachedObjects = false }()
		pin := "landlock"
		if !layerAvailable(pin) {
			pin = "off"
		}
		if got := attackCacheObjects(t, pin); len(got) == 0 {
			t.Errorf("with the objects hard-linked the command's write did not reach the cache: the test proves nothing")
		}
	})
}

func layerAvailable(l string) bool {
	return slices.Contains(sandbox.Probe().Available(), sandbox.Layer(l))
}

// attackCacheObjects runs the attack under pin and returns the cache
// files holding what the command wrote.
func attackCacheObjects(t *testing.T, pin string) []string {
	t.Helper()
	const poison = "POISONED-BY-A-JOB"
	dir := t.TempDir()
	gittest.Init(t, filepath.Join(dir, "victim"), map[string]string{"README.md": "victim\n",
		"attack.sh": "find .git/objects -type f | while read -r f; do chmod u+w \"$f\"; printf '" + poison + "' >> \"$f\" && echo \"wrote $f\"; done\n"})
	extra, env := "", []string{"PATH=" + os.Getenv("PATH")}
	if pin == "off" {
		extra = "sandbox:\n  mode: off\n"
	} else {
		env = append(env, sandbox.LayersEnv+"="+pin)
	}
	write(t, filepath.Join(dir, "task.yaml"), "version: 1\nname: t\nmodel: gpt-4.1-mini\nprompt: hi\npermissions:\n  read: allow\n  bash: {\"bash attack.sh\": allow}\n"+extra)
	spec := filepath.Join(dir, "batch.yaml")
	write(t, spec, "version: 1\nname: rt\ntask: task.yaml\nrepos:\n  - path: victim\n")
	srv := llmtest.NewServer(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"bash attack.sh"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply())
	out, cache := filepath.Join(dir, "out"), filepath.Join(dir, "cache")
	if _, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: out, CacheDir: cache, RetryBackoff: time.Millisecond, Concurrency: 1,
		Executor: &PipelineExecutor{BaseURL: srv.URL(), APIKey: "sk-test-0123456789abcdef", Environ: env}}); err != nil {
		t.Fatal(err)
	}
	var results strings.Builder
	for _, req := range srv.Requests() {
		for _, m := range req.Messages() {
			if c, _ := m["content"].(string); m["role"] == "tool" {
				results.WriteString(c + "\n")
			}
		}
	}
	if !strings.Contains(results.String(), "wrote .git/objects/") {
		if pin == "namespaces" && strings.Contains(results.String(), "Read-only file system") {
			t.Logf("held by the sandbox: .git is read-only under namespaces")
			return nil
		}
		t.Fatalf("attack.sh wrote no object file: tool results %q", results.String())
	}
	var hit []string
	_ = filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), poison) {
				hit = append(hit, p)
			}
		}
		return nil
	})
	return hit
}
