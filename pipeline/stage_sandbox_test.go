package pipeline

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// sandboxSpec lets the agent run `make test` and a check run it again.
const sandboxSpec = `version: 1
name: sandboxed
model: gpt-4.1-mini
prompt: Run the tests.
permissions:
  read: allow
  edit: allow
  bash: {"make test": allow}
checks:
  - {name: tests, run: make test}
limits: {max_steps: 3}
`

// sandboxFixture is a work tree whose Makefile attacks: it writes outside
// the tree and copies .env into the tree.
func sandboxFixture(t *testing.T, section string) (spec, repo, outside string) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	spec = filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, spec, sandboxSpec+section)
	repo = filepath.Join(t.TempDir(), "repo")
	outside = filepath.Join(t.TempDir(), "outside")
	mustWrite(t, filepath.Join(repo, "Makefile"), "test:\n\techo pwned > "+outside+" || true\n\tcat .env > loot.txt || true\n")
	mustWrite(t, filepath.Join(repo, ".env"), "TOKEN=sk-dotenv-0123456789abcdefghij\n")
	return spec, repo, outside
}

func runStartedSandbox(t *testing.T, out string) *event.Sandbox {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs := validLog(t, data)
	var st event.RunStarted
	if err := recs[0].Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Sandbox
}

// TestExecSandboxContainsBashAndChecks: the agent's `make test` and the
// check run in the sandbox (nothing written outside the tree, .env read
// empty), and run.started records the mode and the layers.
func TestExecSandboxContainsBashAndChecks(t *testing.T) {
	sup := sandbox.Probe()
	if len(sup.Available()) == 0 {
		t.Skipf("no sandbox layer on this machine: %s", sup.Missing())
	}
	if _, err := os.Stat("/usr/bin/make"); err != nil {
		t.Skip("make is not installed")
	}
	spec, repo, outside := sandboxFixture(t, "")
	srv := newModel(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"make test"}`)}}.Reply(),
		llmtest.Turn{Text: "Ran."}.Reply())
	out := t.TempDir()
	var stderr bytes.Buffer
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Stderr: &stderr, Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}}); err != nil {
		t.Fatalf("Exec: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("make test wrote outside the work tree: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "loot.txt")); strings.Contains(string(b), "sk-dotenv") {
		t.Errorf("make test read the protected .env: %q", b)
	}
	sb := runStartedSandbox(t, out)
	if sb == nil || sb.Mode != "auto" || len(sb.Layers) != len(sup.Available()) {
		t.Errorf("run.started sandbox = %+v, want mode auto with %v", sb, sup.Available())
	}
}

// TestExecSandboxOff: mode off runs unsandboxed (the attack works) and
// says so on stderr and in run.started; the .env it copied into the tree
// is still caught by the secret gate.
func TestExecSandboxOff(t *testing.T) {
	if _, err := os.Stat("/usr/bin/make"); err != nil {
		t.Skip("make is not installed")
	}
	spec, repo, outside := sandboxFixture(t, "sandbox: {mode: off}\n")
	srv := newModel(t, llmtest.Turn{Text: "Done."}.Reply())
	out := t.TempDir()
	var stderr bytes.Buffer
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Stderr: &stderr, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if ExitCode(err) != ExitTaskFailed || !strings.Contains(err.Error(), "the patch holds a secret") {
		t.Errorf("Exec: %v, want the secret gate to fail the run\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "WARNING: sandbox.mode is off") {
		t.Errorf("stderr does not warn: %q", stderr.String())
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("with mode off the check should have written outside the tree: %v", err)
	}
	if sb := runStartedSandbox(t, out); sb == nil || sb.Mode != "off" || len(sb.Layers) != 0 {
		t.Errorf("run.started sandbox = %+v, want mode off without layers", sb)
	}
}

// TestExecSandboxBadWritable: a writable entry that expands to a relative
// path is a usage error before anything is written.
func TestExecSandboxBadWritable(t *testing.T) {
	spec, repo, _ := sandboxFixture(t, "sandbox: {writable: [$REL_CACHE]}\n")
	out := filepath.Join(t.TempDir(), "out")
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: "http://127.0.0.1:1",
		APIKey: "sk-unit-0123456789abcdef", Environ: []string{"PATH=/usr/bin", "REL_CACHE=cache"}})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), `expands to "cache", not an absolute path`) {
		t.Errorf("err = %v (exit %d), want a usage error naming the entry", err, ExitCode(err))
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the out dir was created: %v", err)
	}
}

// TestProtectedEnvFiles: the sandbox hides .env* files and every file in
// an .env* directory at any depth, not committed templates.
func TestProtectedEnvFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, name := range []string{".env", "conf/.env.d/app", "conf/.env.d/sub/x", "docs/.env.example", "src/a.go", "src/env.go"} {
		mustWrite(t, filepath.Join(root, filepath.FromSlash(name)), "K=v\n")
	}
	var got []string
	for _, p := range protectedEnvFiles(root, nil) {
		rel, _ := filepath.Rel(root, p)
		got = append(got, filepath.ToSlash(rel))
	}
	sort.Strings(got)
	if want := []string{".env", "conf/.env.d/app", "conf/.env.d/sub/x"}; !slices.Equal(got, want) {
		t.Errorf("protected = %v, want %v", got, want)
	}
}
