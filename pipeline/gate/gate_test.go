package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/snapshot"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// TestGitTripwire: a changed hook and an added one fail the gate and are
// put back (changed restored, added removed); an untouched .git passes.
func TestGitTripwire(t *testing.T) {
	wt := t.TempDir()
	mustWrite(t, filepath.Join(wt, ".git", "config"), "[core]\n")
	mustWrite(t, filepath.Join(wt, ".git", "hooks", "pre-commit"), "#!/bin/sh\n")
	g := GitTripwire{Tripwire: ArmTripwire(wt)}
	if f, ok := g.Check(); ok {
		t.Fatalf("untouched .git failed the gate: %+v", f)
	}
	mustWrite(t, filepath.Join(wt, ".git", "config"), "[core]\n\tfsmonitor = ./evil\n")
	mustWrite(t, filepath.Join(wt, ".git", "hooks", "post-checkout"), "#!/bin/sh\nevil\n")
	f, ok := g.Check()
	if !ok || f.Gate != event.GateGitTripwire || strings.Join(f.Paths, ",") != ".git/config,.git/hooks/post-checkout" {
		t.Fatalf("gate %+v, %v: want git_tripwire naming .git/config and the new hook", f, ok)
	}
	if data, _ := os.ReadFile(filepath.Join(wt, ".git", "config")); string(data) != "[core]\n" {
		t.Errorf(".git/config not put back: %q", data)
	}
	if _, err := os.Stat(filepath.Join(wt, ".git", "hooks", "post-checkout")); !os.IsNotExist(err) {
		t.Errorf("the added hook is still there: %v", err)
	}
	if f, ok := (GitTripwire{}).Check(); ok {
		t.Errorf("a gate without a tripwire failed: %+v", f)
	}
}

// TestTaskSpec: a spec in the work tree that a command rewrote fails the
// gate and is put back; one outside the work tree is not watched.
func TestTaskSpec(t *testing.T) {
	wt := t.TempDir()
	task := filepath.Join(wt, ".github", "task.yaml")
	mustWrite(t, task, "name: demo\n")
	g := ArmTaskSpec(task, wt, wt)
	if f, ok := g.Check(); ok {
		t.Fatalf("unchanged spec failed the gate: %+v", f)
	}
	mustWrite(t, task, "name: demo\npermissions: {bash: allow}\n")
	f, ok := g.Check()
	if !ok || f.Gate != event.GateTaskSpec || !slices.Equal(f.Paths, []string{".github/task.yaml"}) ||
		!strings.Contains(f.Message, "put it back") {
		t.Fatalf("gate %+v, %v: want task_spec naming .github/task.yaml", f, ok)
	}
	if data, _ := os.ReadFile(task); string(data) != "name: demo\n" {
		t.Errorf("spec not put back: %q", data)
	}
	outside := filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, outside, "name: demo\n")
	if g := ArmTaskSpec(outside, wt, wt); g != nil {
		t.Errorf("a spec outside the work tree is watched: %+v", g)
	}
	if f, ok := (*TaskSpec)(nil).Check(); ok {
		t.Errorf("a nil guard failed: %+v", f)
	}
}

// TestGitAttributes: a changed .gitattributes or nested .gitmodules fails
// the gate; other files do not.
func TestGitAttributes(t *testing.T) {
	files := []snapshot.FileChange{{Path: "main.go"}, {Path: ".gitattributes"}, {Path: "sub/.gitmodules"}}
	f, ok := GitAttributes{Files: files}.Check()
	if !ok || f.Gate != event.GateGitTripwire || strings.Join(f.Paths, ",") != ".gitattributes,sub/.gitmodules" {
		t.Fatalf("gate %+v, %v", f, ok)
	}
	if f, ok := (GitAttributes{Files: files[:1]}).Check(); ok {
		t.Errorf("main.go alone failed the gate: %+v", f)
	}
}

// rules is a fixed Rules.
type rules struct {
	set permission.Ruleset
	err error
}

func (r rules) Ruleset() (permission.Ruleset, error) { return r.set, r.err }

// TestEditRules: a changed path the edit rules deny (a rename's old path
// included) fails the gate, naming each path with its reason; allowed
// paths pass.
func TestEditRules(t *testing.T) {
	wt := t.TempDir()
	set := permission.Ruleset{
		{Permission: permission.Edit, Pattern: "**", Action: permission.Allow},
		{Permission: permission.Edit, Pattern: ".github/**", Action: permission.Deny},
	}
	files := []snapshot.FileChange{{Path: "main.go"}, {Path: "ci.yml", OldPath: ".github/ci.yml"}}
	f, ok := EditRules{WorkTree: wt, Files: files, Rules: rules{set: set}}.Check()
	if !ok || f.Gate != event.GateEditRules || !slices.Equal(f.Paths, []string{".github/ci.yml"}) ||
		!strings.Contains(f.Message, ".github/ci.yml (") {
		t.Fatalf("gate %+v, %v: want edit_rules naming .github/ci.yml with its reason", f, ok)
	}
	if f, ok := (EditRules{WorkTree: wt, Files: files[:1], Rules: rules{set: set}}).Check(); ok {
		t.Errorf("an allowed path failed the gate: %+v", f)
	}
}

// TestSecret: a changed file holding a secret value fails the gate and
// the patch file is rewritten without the value; a clean change passes.
func TestSecret(t *testing.T) {
	const secret = "planted-Env-secret-0d9e8f7a"
	wt := t.TempDir()
	mustWrite(t, filepath.Join(wt, "conf.py"), "TOKEN = '"+secret+"'\n")
	mustWrite(t, filepath.Join(wt, "ok.py"), "x = 1\n")
	patch := filepath.Join(t.TempDir(), "patch")
	mustWrite(t, patch, "diff --git a/conf.py b/conf.py\n+TOKEN = '"+secret+"'\n")
	red := event.NewRedactor([]string{"SERVICE_TOKEN=" + secret})
	g := Secret{WorkTree: wt, PatchPath: patch, Files: []snapshot.FileChange{{Path: "conf.py"}}, Redactor: red}
	f, ok := g.Check()
	if !ok || f.Gate != event.GateSecret || !slices.Equal(f.Paths, []string{"conf.py"}) {
		t.Fatalf("gate %+v, %v: want secret naming conf.py", f, ok)
	}
	if data, _ := os.ReadFile(patch); strings.Contains(string(data), secret) {
		t.Errorf("the patch still holds the secret:\n%s", data)
	}
	clean := filepath.Join(t.TempDir(), "patch")
	mustWrite(t, clean, "diff --git a/ok.py b/ok.py\n+x = 1\n")
	if f, ok := (Secret{WorkTree: wt, PatchPath: clean, Files: []snapshot.FileChange{{Path: "ok.py"}}, Redactor: red}).Check(); ok {
		t.Errorf("a clean change failed the gate: %+v", f)
	}
}

// TestSubmodules: a file changed inside a submodule listed in .gitmodules
// fails the gate; an untouched submodule passes.
func TestSubmodules(t *testing.T) {
	wt := t.TempDir()
	mustWrite(t, filepath.Join(wt, ".gitmodules"), "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib\n")
	mustWrite(t, filepath.Join(wt, "lib", "lib.go"), "package lib\n")
	g := Submodules{WorkTree: wt, Tripwire: ArmTripwire(wt)}
	if f, ok := g.Check(); ok {
		t.Fatalf("untouched submodule failed the gate: %+v", f)
	}
	mustWrite(t, filepath.Join(wt, "lib", "lib.go"), "package lib // changed\n")
	f, ok := g.Check()
	if !ok || f.Gate != event.GateSubmodule || !slices.Equal(f.Paths, []string{"lib"}) {
		t.Fatalf("gate %+v, %v: want submodule naming lib", f, ok)
	}
}

// restorer is a fixed Restorer.
type restorer struct{ changed, lost []string }

func (r restorer) Restore() (changed, lost []string) { return r.changed, r.lost }

// TestRunnerState: earlier runs' changed files, this run's out dir and
// the modes each add their paths and message; nothing changed passes.
func TestRunnerState(t *testing.T) {
	g := RunnerState{Earlier: restorer{changed: []string{".runner/a/result.json"}, lost: []string{".runner/a/big"}},
		Out: []string{".runner/b/events.jsonl"}, OutMessage: "out dir changed",
		Modes: []string{".runner"}, ModesMessage: "modes changed"}
	f, ok := g.Check()
	if !ok || f.Gate != event.GateRunnerState ||
		strings.Join(f.Paths, ",") != ".runner/a/result.json,.runner/b/events.jsonl,.runner" ||
		!strings.Contains(f.Message, "except .runner/a/big") || !strings.HasSuffix(f.Message, "; out dir changed; modes changed") {
		t.Fatalf("gate %+v, %v", f, ok)
	}
	if f, ok := (RunnerState{Earlier: restorer{}}).Check(); ok {
		t.Errorf("nothing changed failed the gate: %+v", f)
	}
}

// TestRunOrder: Run checks every gate in order, returns the failures in
// that order, and an empty (not nil) list when all pass.
func TestRunOrder(t *testing.T) {
	attrs := GitAttributes{Files: []snapshot.FileChange{{Path: ".gitattributes"}}}
	state := RunnerState{OutMessage: "out", Out: []string{"x"}}
	got := Run([]Gate{attrs, GitAttributes{}, state})
	if len(got) != 2 || got[0].Gate != event.GateGitTripwire || got[1].Gate != event.GateRunnerState {
		t.Fatalf("failures %+v", got)
	}
	if got := Run(nil); got == nil || len(got) != 0 {
		t.Errorf("Run(nil) = %#v, want an empty list", got)
	}
}
