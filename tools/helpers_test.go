package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// tree writes files (slash paths → content) under a new temp dir.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tool returns the built-in called name for env.
func tool(t testing.TB, env Env, name string) Tool {
	t.Helper()
	tl, ok := Named(Builtins(env), name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	return tl
}

// run calls tl with params encoded as JSON and fails on a Go error.
func run(t *testing.T, tl Tool, params any) Result {
	t.Helper()
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Run(t.Context(), Call{ID: "c1", Input: raw})
	if err != nil {
		t.Fatalf("%s(%s): %v", tl.Info().Name, raw, err)
	}
	return res
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
