package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/seed43ef5acb/runner/"

// layers are the module's packages from top to bottom (DESIGN.md): a
// package may import packages of its own layer or of lower ones, never of
// a higher one. A package belongs to the layer of its longest prefix.
func layers() []string {
	return []string{"cmd", "pipeline", "github", "runner", "runner/snapshot", "runner/event", "tools/mcp", "tools", "tools/permission/bashcheck", "tools/permission", "tools/gitignore", "llm"}
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

// TestLayering enforces the one-way package dependencies of DESIGN.md on
// the module's non-test imports: llm knows nothing of tools, runner,
// pipeline or github; tools nothing of runner, pipeline or github; runner
// nothing of pipeline or github; nothing imports cmd.
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to list packages: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), "go", "list", "-e", "-json=ImportPath,Imports", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	checked := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		from := strings.TrimPrefix(p.ImportPath, module)
		if layerOf(from) < 0 {
			continue
		}
		checked++
		for _, imp := range p.Imports {
			to, ok := strings.CutPrefix(imp, module)
			if !ok || layerOf(to) < 0 {
				continue
			}
			if layerOf(to) < layerOf(from) {
				t.Errorf("%s imports %s, a higher layer (layers, top to bottom: %v)", from, to, layers())
			}
		}
	}
	if checked < 5 {
		t.Errorf("checked only %d packages", checked)
	}
}

func TestLayerOf(t *testing.T) {
	tests := []struct {
		pkg  string
		want string
	}{
		{"cmd/runner", "cmd"},
		{"pipeline/batch", "pipeline"},
		{"runner/report", "runner"},
		{"runner/event", "runner/event"},
		{"tools/permission", "tools/permission"},
		{"tools/permission/bashcheck", "tools/permission/bashcheck"},
		{"tools/permission/permtest", "tools/permission"},
		{"tools/gitignore", "tools/gitignore"},
		{"tools/mcp", "tools/mcp"},
		{"llm/llmtest", "llm"},
		{"internal/deps", ""},
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
}
