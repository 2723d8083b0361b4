package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/mcp/mcptest"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestMCPServerReadsProtectedFileMadeMidRun runs the documented limit for
// real: a stdio MCP server starts once, with the covers of that moment, so
// a protected .env.local that a later bash command writes is not hidden
// from it (under every layer pinned, and with the sandbox off), and the
// server's read tool returns it. What the model and the log get is the
// value redacted: it joined the redactors when the command that wrote it
// returned. A bash command reading the same file after it (the control of
// the covers) finds it hidden, except with the sandbox off.
func TestMCPServerReadsProtectedFileMadeMidRun(t *testing.T) {
	requireTool(t, "make")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const token = "mcp-midrun-token-9c4e1a77"
	for _, pin := range attackPins() {
		t.Run(pin, func(t *testing.T) {
			requirePin(t, pin)
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			repo := gittest.Repo(t, map[string]string{".gitignore": ".env.local\nloot\n",
				"Makefile": "plant:\n\t@printf 'API_TOKEN=" + token + "\\n' > .env.local\nloot:\n\t-@cat .env.local > loot 2>&1\n"})
			section := ""
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			if pin == "off" {
				section = "sandbox: {mode: \"off\"}\n"
			} else {
				env = append(env, sandbox.LayersEnv+"="+pin)
			}
			spec := filepath.Join(t.TempDir(), "task.yaml")
			mustWrite(t, spec, fmt.Sprintf(`version: 1
name: mcp-midrun
model: gpt-4.1-mini
prompt: Try.
mcp:
  servers:
    files: {command: [%q], env: {MCPTEST_MODE: %s}}
permissions:
  mcp: {"files/*": allow}
  bash: {"make *": allow}
limits: {max_steps: 5}
`, exe, mcptest.ModeServe)+section)
			bash := func(cmd string) llmtest.Reply {
				return llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"`+cmd+`"}`)}}.Reply()
			}
			srv := newModel(t, bash("make plant"),
				llmtest.ToolCalls(llmtest.Call("mcp__files__read", fmt.Sprintf(`{"text":%q}`, filepath.Join(repo, ".env.local")))),
				bash("make loot"), llmtest.Text("Done."))
			out := t.TempDir()
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
				APIKey: testKey, Stderr: &strings.Builder{}, Environ: env})
			if err != nil {
				t.Fatalf("exec: %v", err)
			}
			sent := attackResult{srv: srv}.toolResults()
			if !strings.Contains(sent, "read: API_TOKEN="+event.Redacted) {
				t.Errorf("the server did not read the file made mid-run (the limit), or its value was not redacted:\n%s", sent)
			}
			logData, _ := os.ReadFile(filepath.Join(out, "events.jsonl"))
			if strings.Contains(sent, token) || strings.Contains(string(logData), token) {
				t.Errorf("the value reached the model or the log:\n%s", sent)
			}
			loot, _ := os.ReadFile(filepath.Join(repo, "loot"))
			if got, want := strings.Contains(string(loot), token), pin == "off"; got != want {
				t.Errorf("a later bash command read the file: %v, want %v (hidden under every layer): %q", got, want, loot)
			}
		})
	}
}
