package gate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/snapshot"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// mustWrite writes content to path, making its directories.
func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture is a gate armed on a fixture tree, and what makes it fail.
type fixture struct {
	gate   Gate
	dir    string // the fixture's work tree
	tamper func() // makes the gate fail; nil: it fails as built
}

// fail tampers with the fixture's tree, if it needs to, to fail the gate.
func (fx fixture) fail() Gate {
	if fx.tamper != nil {
		fx.tamper()
	}
	return fx.gate
}

// fixtures build, for each gate type by name, a failing fixture. The gate
// tests use them, and TestGateDocLinks runs each through Run.
var fixtures = map[string]func(t *testing.T) fixture{
	"GitTripwire":   gitTripwireFixture,
	"TaskSpec":      taskSpecFixture,
	"GitAttributes": gitAttributesFixture,
	"EditRules":     editRulesFixture,
	"Secret":        secretFixture,
	"Submodules":    submodulesFixture,
	"RunnerState":   runnerStateFixture,
}

// gitTripwireFixture: a changed .git/config and an added hook.
func gitTripwireFixture(t *testing.T) fixture {
	t.Helper()
	wt := t.TempDir()
	mustWrite(t, filepath.Join(wt, ".git", "config"), "[core]\n")
	mustWrite(t, filepath.Join(wt, ".git", "hooks", "pre-commit"), "#!/bin/sh\n")
	return fixture{gate: GitTripwire{Tripwire: ArmTripwire(wt)}, dir: wt, tamper: func() {
		mustWrite(t, filepath.Join(wt, ".git", "config"), "[core]\n\tfsmonitor = ./evil\n")
		mustWrite(t, filepath.Join(wt, ".git", "hooks", "post-checkout"), "#!/bin/sh\nevil\n")
	}}
}

// taskSpecFixture: the spec in the work tree loosened by a command.
func taskSpecFixture(t *testing.T) fixture {
	t.Helper()
	wt := t.TempDir()
	task := filepath.Join(wt, ".github", "task.yaml")
	mustWrite(t, task, "name: demo\n")
	return fixture{gate: ArmTaskSpec(task, wt, wt), dir: wt, tamper: func() {
		mustWrite(t, task, "name: demo\npermissions: {bash: allow}\n")
	}}
}

// gitAttributesFixture: a changed .gitattributes and nested .gitmodules.
func gitAttributesFixture(t *testing.T) fixture {
	t.Helper()
	files := []snapshot.FileChange{{Path: "main.go"}, {Path: ".gitattributes"}, {Path: "sub/.gitmodules"}}
	return fixture{gate: GitAttributes{Files: files}}
}

// editRulesRules allow edits but under .github/.
var editRulesRules = permission.Ruleset{
	{Permission: permission.Edit, Pattern: "**", Action: permission.Allow},
	{Permission: permission.Edit, Pattern: ".github/**", Action: permission.Deny},
}

// editRulesFixture: a rename out of .github/, which the edit rules deny.
func editRulesFixture(t *testing.T) fixture {
	t.Helper()
	wt := t.TempDir()
	files := []snapshot.FileChange{{Path: "main.go"}, {Path: "ci.yml", OldPath: ".github/ci.yml"}}
	return fixture{gate: EditRules{WorkTree: wt, Files: files, Rules: rules{set: editRulesRules}}, dir: wt}
}

// plantedSecret is the secret environment value of secretFixture.
const plantedSecret = "planted-Env-secret-0d9e8f7a"

// secretFixture: a changed file and the patch hold a secret value.
func secretFixture(t *testing.T) fixture {
	t.Helper()
	wt := t.TempDir()
	mustWrite(t, filepath.Join(wt, "conf.py"), "TOKEN = '"+plantedSecret+"'\n")
	mustWrite(t, filepath.Join(wt, "ok.py"), "x = 1\n")
	patch := filepath.Join(t.TempDir(), "patch")
	mustWrite(t, patch, "diff --git a/conf.py b/conf.py\n+TOKEN = '"+plantedSecret+"'\n")
	red := event.NewRedactor([]string{"SERVICE_TOKEN=" + plantedSecret})
	return fixture{gate: Secret{WorkTree: wt, PatchPath: patch, Files: []snapshot.FileChange{{Path: "conf.py"}}, Redactor: red}, dir: wt}
}

// submodulesFixture: a file changed inside submodule lib.
func submodulesFixture(t *testing.T) fixture {
	t.Helper()
	wt := t.TempDir()
	mustWrite(t, filepath.Join(wt, ".gitmodules"), "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib\n")
	mustWrite(t, filepath.Join(wt, "lib", "lib.go"), "package lib\n")
	return fixture{gate: Submodules{WorkTree: wt, Tripwire: ArmTripwire(wt)}, dir: wt, tamper: func() {
		mustWrite(t, filepath.Join(wt, "lib", "lib.go"), "package lib // changed\n")
	}}
}

// runnerStateFixture: earlier runs' files, this run's out dir and modes
// changed.
func runnerStateFixture(t *testing.T) fixture {
	t.Helper()
	return fixture{gate: RunnerState{Earlier: restorer{changed: []string{".runner/a/result.json"}, lost: []string{".runner/a/big"}},
		Out: []string{".runner/b/events.jsonl"}, OutMessage: "out dir changed",
		Modes: []string{".runner"}, ModesMessage: "modes changed"}}
}
