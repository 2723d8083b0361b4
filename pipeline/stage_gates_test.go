package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/pipeline/gate"
	"github.com/seed43ef5acb/runner/runner/event"
)

// gateSpec lets the agent run `make` and edit anything but .github.
const gateSpec = `version: 1
name: gates
model: gpt-4.1-mini
prompt: Build.
permissions:
  read: allow
  edit: {"**": allow, ".github/**": deny}
  bash: {"make": allow}
limits: {max_steps: 3}
`

// gateRun runs the agent once: `make` with makefile, then a final answer.
// It returns the exit code, the records of the log and the patch text.
func gateRun(t *testing.T, repo, section string, replies ...llmtest.Reply) (int, []event.Record, string) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	r := testRun{spec: gateSpec + section, repo: repo, replies: append(replies, llmtest.Turn{Text: "Built."}.Reply()),
		env: []string{"DEPLOY_TOKEN=dt-0123456789abcdefXYZ"}}.exec(t)
	return ExitCode(r.err), r.recs, r.file("changes.patch")
}

func makeTurn() llmtest.Reply {
	return llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"make"}`)}}.Reply()
}

// gatesOf returns the gate.failed events and run.finished of a log.
func gatesOf(t *testing.T, recs []event.Record) ([]event.GateFailed, event.RunFinished) {
	t.Helper()
	var gates []event.GateFailed
	var fin event.RunFinished
	for _, r := range recs {
		switch r.Type {
		case "gate.failed":
			var g event.GateFailed
			if err := r.Decode(&g); err != nil {
				t.Fatal(err)
			}
			gates = append(gates, g)
		case "run.finished":
			if err := r.Decode(&fin); err != nil {
				t.Fatal(err)
			}
		}
	}
	return gates, fin
}

// TestGateEditRules: an allowed command that writes into an edit-denied
// path (.github/**) fails the run with status violation.
func TestGateEditRules(t *testing.T) {
	repo := gittest.Repo(t, map[string]string{"Makefile": "all:\n\tmkdir -p .github/workflows && echo 'on: push' > .github/workflows/evil.yml\n"})
	code, recs, _ := gateRun(t, repo, "", makeTurn())
	gates, fin := gatesOf(t, recs)
	if code != ExitTaskFailed || fin.Status != event.StatusViolation || fin.Error == nil || fin.Error.Class != event.ClassViolation {
		t.Errorf("exit %d, run.finished %+v; want exit 1 with status violation", code, fin)
	}
	if len(gates) != 1 || gates[0].Gate != event.GateEditRules || gates[0].Paths[0] != ".github/workflows/evil.yml" {
		t.Errorf("gates %+v, want one edit_rules gate on .github/workflows/evil.yml", gates)
	}
}

// TestGateGitTripwire: unsandboxed (mode off), a command that adds a hook
// and core.fsmonitor and a .gitattributes is caught, and .git is put back.
func TestGateGitTripwire(t *testing.T) {
	repo := gittest.Repo(t, map[string]string{"Makefile": "all:\n\tprintf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config\n" +
		"\tprintf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit\n\techo '* filter=evil' > .gitattributes\n"})
	config, err := os.ReadFile(filepath.Join(repo, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	code, recs, _ := gateRun(t, repo, "sandbox: {mode: off}\n", makeTurn())
	gates, fin := gatesOf(t, recs)
	if code != ExitTaskFailed || fin.Status != event.StatusViolation {
		t.Errorf("exit %d, status %s; want 1, violation", code, fin.Status)
	}
	var paths []string
	for _, g := range gates {
		if g.Gate == event.GateGitTripwire {
			paths = append(paths, g.Paths...)
		}
	}
	if strings.Join(paths, " ") != ".git/config .git/hooks/pre-commit .gitattributes" {
		t.Errorf("tripwire paths %q", paths)
	}
	if now, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); !bytes.Equal(now, config) {
		t.Errorf(".git/config was not put back:\n%s", now)
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("the added hook was not removed")
	}
}

// TestGateSecretInPatch: a secret value from the runner's environment and
// a token shape in the patch fail the run; the patch file is redacted.
func TestGateSecretInPatch(t *testing.T) {
	repo := gittest.Repo(t, map[string]string{"README": "x\n"})
	write := llmtest.Turn{ToolCalls: []llmtest.ToolCall{
		llmtest.Call("write", `{"path":"config.txt","content":"deploy dt-0123456789abcdefXYZ\n"}`),
		llmtest.Call("write", `{"path":"token.txt","content":"ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"}`),
	}}.Reply()
	code, recs, patch := gateRun(t, repo, "", write)
	gates, fin := gatesOf(t, recs)
	if code != ExitTaskFailed || fin.Status != event.StatusViolation {
		t.Errorf("exit %d, status %s; want 1, violation", code, fin.Status)
	}
	if len(gates) != 1 || gates[0].Gate != event.GateSecret || strings.Join(gates[0].Paths, " ") != "config.txt token.txt" {
		t.Errorf("gates %+v, want one secret gate naming both files", gates)
	}
	if strings.Contains(patch, "dt-0123456789abcdefXYZ") || strings.Contains(patch, "ghp_abcdefghij") || !strings.Contains(patch, "[REDACTED]") {
		t.Errorf("the patch file still holds the secret:\n%s", patch)
	}
}

// TestGateSubmodule: an edit inside a submodule, which the patch cannot
// carry, fails the run instead of vanishing.
func TestGateSubmodule(t *testing.T) {
	sub := gittest.Repo(t, map[string]string{"lib.go": "package lib\n"})
	repo := gittest.Repo(t, map[string]string{"Makefile": "all:\n\techo '// changed' >> sub/lib.go\n"})
	gittest.Run(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
	gittest.Run(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "sub")
	code, recs, _ := gateRun(t, repo, "", makeTurn())
	gates, fin := gatesOf(t, recs)
	if code != ExitTaskFailed || fin.Status != event.StatusViolation || len(gates) != 1 || gates[0].Gate != event.GateSubmodule || gates[0].Paths[0] != "sub" {
		t.Errorf("exit %d, status %s, gates %+v; want one submodule gate on sub", code, fin.Status, gates)
	}
}

// TestGatesPassCleanRun: an honest run passes every gate.
func TestGatesPassCleanRun(t *testing.T) {
	repo := gittest.Repo(t, map[string]string{"Makefile": "all:\n\techo built > out.txt\n"})
	code, recs, patch := gateRun(t, repo, "", makeTurn())
	gates, fin := gatesOf(t, recs)
	if code != ExitOK || fin.Status != event.StatusSuccess || len(gates) != 0 || !strings.Contains(patch, "+built") {
		t.Errorf("exit %d, status %s, gates %+v, patch %q", code, fin.Status, gates, patch)
	}
}

// TestExecBareRepoRefused: a bare repository as --repo is a usage error
// (exit 2) before anything is written; its clone is accepted.
func TestExecBareRepoRefused(t *testing.T) {
	src := gittest.Repo(t, map[string]string{"README": "x\n"})
	bare := filepath.Join(t.TempDir(), "bare.git")
	gittest.Run(t, t.TempDir(), "clone", "-q", "--bare", src, bare)
	spec := filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, spec, gateSpec)
	out := filepath.Join(t.TempDir(), "out")
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: bare, Out: out, BaseURL: "http://127.0.0.1:1",
		APIKey: "sk-unit-0123456789abcdef", Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "is a bare git repository") {
		t.Errorf("err = %v (exit %d), want exit 2 naming the bare repository", err, ExitCode(err))
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the out dir was written: %v", err)
	}
	if !isBareRepo(bare) || isBareRepo(src) {
		t.Error("isBareRepo does not tell the bare repository from the checkout")
	}
}

// TestGateMessageLinksDocs: a gate's failure links its section of
// docs/gates.md in the event, result.json, summary.md, the step summary
// and the ::error annotation.
func TestGateMessageLinksDocs(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	repo := gittest.Repo(t, map[string]string{"Makefile": "all:\n\tmkdir -p .github/workflows && echo 'on: push' > .github/workflows/evil.yml\n"})
	env, _, summary := actionsEnv(t, "push", `{"ref":"refs/heads/main"}`)
	r := testRun{spec: gateSpec, repo: repo, env: env, replies: []llmtest.Reply{makeTurn(), llmtest.Turn{Text: "Built."}.Reply()},
		opts: func(o *ExecOptions) { o.Quiet = false }}.exec(t)
	link := gate.DocURL(event.GateEditRules)
	if !strings.HasSuffix(link, "/docs/gates.md#edit-rules") {
		t.Fatalf("link %q does not name docs/gates.md#edit-rules", link)
	}
	gates, fin := gatesOf(t, r.recs)
	if len(gates) != 1 || !strings.HasSuffix(gates[0].Message, " (see "+link+")") {
		t.Fatalf("gates %+v: want one whose message ends with the link %s", gates, link)
	}
	if fin.Error == nil || !strings.Contains(fin.Error.Message, link) {
		t.Errorf("run.finished's error %+v lacks the link", fin.Error)
	}
	step, _ := os.ReadFile(summary)
	for name, text := range map[string]string{"result.json": r.file("result.json"), "summary.md": r.file("summary.md"),
		"the step summary": string(step), "the console": r.stderr} {
		if !strings.Contains(text, link) {
			t.Errorf("%s lacks the link %s:\n%s", name, link, text)
		}
	}
	if !slices.ContainsFunc(strings.Split(r.stderr, "\n"), func(l string) bool {
		return strings.HasPrefix(l, "::error") && strings.Contains(l, link)
	}) {
		t.Errorf("no ::error annotation with the link on the console:\n%s", r.stderr)
	}
}
