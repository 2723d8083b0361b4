package gate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/doclink"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/snapshot"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// TestGitTripwire: a changed hook and an added one fail the gate and are
// put back (changed restored, added removed); an untouched .git passes.
func TestGitTripwire(t *testing.T) {
	fx := gitTripwireFixture(t)
	wt := fx.dir
	if f, ok := fx.gate.Check(); ok {
		t.Fatalf("untouched .git failed the gate: %+v", f)
	}
	f, ok := fx.fail().Check()
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
	fx := taskSpecFixture(t)
	wt, task := fx.dir, filepath.Join(fx.dir, ".github", "task.yaml")
	if f, ok := fx.gate.Check(); ok {
		t.Fatalf("unchanged spec failed the gate: %+v", f)
	}
	f, ok := fx.fail().Check()
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
	g := gitAttributesFixture(t).fail().(GitAttributes)
	f, ok := g.Check()
	if !ok || f.Gate != event.GateGitTripwire || strings.Join(f.Paths, ",") != ".gitattributes,sub/.gitmodules" {
		t.Fatalf("gate %+v, %v", f, ok)
	}
	if f, ok := (GitAttributes{Files: g.Files[:1]}).Check(); ok {
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
	g := editRulesFixture(t).fail().(EditRules)
	f, ok := g.Check()
	if !ok || f.Gate != event.GateEditRules || !slices.Equal(f.Paths, []string{".github/ci.yml"}) ||
		!strings.Contains(f.Message, ".github/ci.yml (") {
		t.Fatalf("gate %+v, %v: want edit_rules naming .github/ci.yml with its reason", f, ok)
	}
	if f, ok := (EditRules{WorkTree: g.WorkTree, Files: g.Files[:1], Rules: g.Rules}).Check(); ok {
		t.Errorf("an allowed path failed the gate: %+v", f)
	}
}

// TestSecret: a changed file holding a secret value fails the gate and
// the patch file is rewritten without the value; a clean change passes.
func TestSecret(t *testing.T) {
	g := secretFixture(t).fail().(Secret)
	f, ok := g.Check()
	if !ok || f.Gate != event.GateSecret || !slices.Equal(f.Paths, []string{"conf.py"}) {
		t.Fatalf("gate %+v, %v: want secret naming conf.py", f, ok)
	}
	if data, _ := os.ReadFile(g.PatchPath); strings.Contains(string(data), plantedSecret) {
		t.Errorf("the patch still holds the secret:\n%s", data)
	}
	clean := filepath.Join(t.TempDir(), "patch")
	mustWrite(t, clean, "diff --git a/ok.py b/ok.py\n+x = 1\n")
	if f, ok := (Secret{WorkTree: g.WorkTree, PatchPath: clean, Files: []snapshot.FileChange{{Path: "ok.py"}}, Redactor: g.Redactor}).Check(); ok {
		t.Errorf("a clean change failed the gate: %+v", f)
	}
}

// TestSubmodules: a file changed inside a submodule listed in .gitmodules
// fails the gate; an untouched submodule passes.
func TestSubmodules(t *testing.T) {
	fx := submodulesFixture(t)
	if f, ok := fx.gate.Check(); ok {
		t.Fatalf("untouched submodule failed the gate: %+v", f)
	}
	f, ok := fx.fail().Check()
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
	f, ok := runnerStateFixture(t).fail().Check()
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

// TestGateDocLinks: every gate's failure, through Run, ends with a link to
// its section of docs/gates.md, and that section exists. Every gate type
// needs a fixture, so a gate added without a section fails here.
func TestGateDocLinks(t *testing.T) {
	doc, err := os.ReadFile("../../docs/gates.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := doclink.Anchors(string(doc))
	types := gateTypes(t)
	for _, name := range types {
		build, ok := fixtures[name]
		if !ok {
			t.Errorf("gate %s has no fixture: add one to fixtures (helpers_test.go) and its section to docs/gates.md", name)
			continue
		}
		failed := Run([]Gate{build(t).fail()})
		if len(failed) != 1 {
			t.Errorf("gate %s: its fixture gave %d failures, want 1", name, len(failed))
			continue
		}
		f := failed[0]
		anchor, ok := docAnchors[f.Gate]
		if !ok {
			t.Errorf("gate %s (%s) has no anchor in docAnchors: add its section to docs/gates.md and the anchor", name, f.Gate)
			continue
		}
		if want := " (see " + doclink.Base + "gates.md#" + anchor + ")"; !strings.HasSuffix(f.Message, want) {
			t.Errorf("gate %s: message %q does not end with %q", name, f.Message, want)
		}
		if !anchors[anchor] {
			t.Errorf("gate %s links #%s, but no heading of docs/gates.md has that anchor", name, anchor)
		}
	}
	for name := range fixtures {
		if !slices.Contains(types, name) {
			t.Errorf("fixture %s names no gate type of package gate", name)
		}
	}
}

// gateTypes are the types of package gate (non-test files) with a Check
// method: the gates.
func gateTypes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Check" || len(fn.Recv.List) != 1 {
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok {
				types = append(types, id.Name)
			}
		}
	}
	if len(types) == 0 {
		t.Fatal("found no gate type (no Check method) in package gate")
	}
	slices.Sort(types)
	return types
}
