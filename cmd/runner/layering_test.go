package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/seed43ef5acb/runner/"

// layers are the module's packages from top to bottom (ARCHITECTURE.md): a
// package may import packages of its own layer or of lower ones, never of
// a higher one. A package belongs to the layer of its longest prefix, so a
// new package lands in its parent's layer until it is listed here (say
// tools/sandbox, below tools and above the permission packages).
// Packages outside every layer (internal/golden, a test helper of all)
// are not checked.
func layers() []string {
	return []string{
		"cmd",
		"pipeline/batch",     // one task over many repositories
		"pipeline",           // the stages of one run
		"pipeline/gate",      // the post-run gates
		"pipeline/ownfiles",  // the runner's guards of its own files
		"pipeline/spec",      // the task spec
		"github",             // Actions, comments, pull requests
		"internal/telemetry", // OpenTelemetry from the event stream
		"runner/report",      // summaries of event logs
		"runner",             // the agent loop
		"runner/snapshot",    // work tree snapshots and patches
		"runner/event",       // the event log
		"tools/mcp",          // MCP servers' tools
		"tools",              // the built-in tools
		"tools/sandbox",      // OS sandbox of the bash tool
		"tools/permission/bashcheck",
		"tools/permission",   // rules, matching, protected paths
		"internal/treewalk",  // the one work-tree walk of snapshots and search tools
		"internal/gitignore", // git's ignore rules
		"llm",                // the model provider
		"secret",             // what a secret is: the env scrub's and the redactor's one rule
	}
}

func layerOf(pkg string) int {
	best, bestLen := -1, -1
	for i, l := range layers() {
		if (pkg == l || strings.HasPrefix(pkg, l+"/")) && len(l) > bestLen {
			best, bestLen = i, len(l)
		}
	}
	return best
}

// goPackage is what go list says of one package.
type goPackage struct {
	ImportPath string
	Dir        string
	Name       string
	Imports    []string
	GoFiles    []string
}

// modulePackages lists the module's packages with go list.
func modulePackages(t *testing.T) []goPackage {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to list packages: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), "go", "list", "-e", "-json=ImportPath,Dir,Name,Imports,GoFiles", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if inNestedRepository(cmd.Dir, p.Dir) {
			continue // e.g. examples/batch/demo/svc-a, made by make-demo-repos.sh
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// inNestedRepository reports whether dir lies in a git repository of its own
// below root (a directory between them, dir included, holds .git): such
// packages are a user's or an example's checkout, not the module's code.
func inNestedRepository(root, dir string) bool {
	root, err := filepath.Abs(root)
	if err != nil {
		return false
	}
	for d := dir; d != root && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
	}
	return false
}

// moduleImports are the module packages p imports (relative paths).
func moduleImports(p goPackage) []string {
	var out []string
	for _, imp := range p.Imports {
		if to, ok := strings.CutPrefix(imp, module); ok {
			out = append(out, to)
		}
	}
	return out
}

// TestLayering enforces the one-way package dependencies on the module's
// non-test imports: batch above pipeline above the spec, github below
// both, the agent loop below github, the tools below the loop, llm at the
// bottom; nothing imports cmd.
func TestLayering(t *testing.T) {
	checked := 0
	for _, p := range modulePackages(t) {
		from := strings.TrimPrefix(p.ImportPath, module)
		if layerOf(from) < 0 {
			continue
		}
		checked++
		for _, to := range moduleImports(p) {
			if layerOf(to) >= 0 && layerOf(to) < layerOf(from) {
				t.Errorf("%s imports %s, a higher layer (layers, top to bottom: %v)", from, to, layers())
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked only %d packages", checked)
	}
}

// TestPackageCommentsNameImports: every package's doc comment has an
// "Imports:" paragraph that names each module package it imports, so the
// comment says truthfully what the package may use.
func TestPackageCommentsNameImports(t *testing.T) {
	for _, p := range modulePackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		if len(p.GoFiles) == 0 {
			continue // tests only (e2e)
		}
		doc := packageDoc(t, p)
		_, imports, ok := strings.Cut(doc, "Imports:")
		if !ok {
			t.Errorf("%s: the package comment has no \"Imports:\" paragraph; add one that says what it may import", rel)
			continue
		}
		for _, to := range moduleImports(p) {
			if !namesPath(imports, to) {
				t.Errorf("%s imports %s, which its package comment's \"Imports:\" paragraph does not name: add it there", rel, to)
			}
		}
	}
}

// packageDoc is the package comment of p's non-test files.
func packageDoc(t *testing.T, p goPackage) string {
	t.Helper()
	fset := token.NewFileSet()
	var doc strings.Builder
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			doc.WriteString(f.Doc.Text())
		}
	}
	return doc.String()
}

// namesPath reports whether text names the package path as a whole word.
func namesPath(text, path string) bool {
	return regexp.MustCompile(`(^|[\s,(` + "`" + `])` + regexp.QuoteMeta(path) + `($|[\s,.;:)` + "`" + `])`).MatchString(text)
}

func TestLayerOf(t *testing.T) {
	tests := []struct {
		pkg  string
		want string
	}{
		{"cmd/runner", "cmd"},
		{"pipeline/batch", "pipeline/batch"},
		{"pipeline/spec", "pipeline/spec"},
		{"pipeline/other", "pipeline"},
		{"runner/report", "runner/report"},
		{"runner/event", "runner/event"},
		{"tools/permission", "tools/permission"},
		{"tools/permission/bashcheck", "tools/permission/bashcheck"},
		{"tools/permission/permtest", "tools/permission"},
		{"tools/sandbox", "tools/sandbox"},
		{"internal/treewalk", "internal/treewalk"},
		{"llm/llmtest", "llm"},
		{"secret", "secret"},
		{"internal/golden", ""},
		{"toolsx", ""},
	}
	for _, tt := range tests {
		got := ""
		if i := layerOf(tt.pkg); i >= 0 {
			got = layers()[i]
		}
		if got != tt.want {
			t.Errorf("layerOf(%q) = %q, want %q", tt.pkg, got, tt.want)
		}
	}
	if !namesPath("Imports: tools and tools/permission.", "tools/permission") || namesPath("Imports: tools/permission/bashcheck.", "tools/permission") {
		t.Error("namesPath matches parts of paths")
	}
}
