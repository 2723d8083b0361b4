// Package permtest holds test helpers shared by tools/permission and its
// bash analyzer (tools/permission/bashcheck): the work tree the shared
// permission cases describe, and the loader of those cases (JSON lines).
//
// Imports: the standard library only (test helpers of tools/permission and
// tools/permission/bashcheck).
package permtest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Case is one line of testdata/bash.jsonl or testdata/paths.jsonl (copies
// of /work/shared/cases/permissions; see testdata/README.md): a policy as
// the spec writes it, a command or a (permission, path) pair, and the
// expected decision ("allow" or "deny") with the kind of case and why.
type Case struct {
	Policy     map[string]any `json:"policy"`
	Command    string         `json:"command"`
	Permission string         `json:"permission"`
	Path       string         `json:"path"`
	Expect     string         `json:"expect"`
	Kind       string         `json:"kind"`
	Why        string         `json:"why"`
}

// LoadCases reads the JSON lines of file (blank lines skipped); a missing
// file, a bad line or an empty file fails the test.
func LoadCases(t testing.TB, file string) []Case {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Case
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s:%d: %v", file, line, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no cases", file)
	}
	return out
}

// CaseTree builds the work tree the cases describe and returns its path:
// src/a.go, docs/x.md, vendor/m/m.go, .env, config/.env.production,
// .git/{config,HEAD,hooks/pre-commit}, and link-out, a symlink to a
// directory outside it (../outside) holding x.txt and secret.txt.
func CaseTree(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	wt := filepath.Join(base, "wt")
	outside := filepath.Join(base, "outside")
	files := map[string]string{
		"wt/src/a.go":               "package a\n",
		"wt/docs/x.md":              "# x\n",
		"wt/vendor/m/m.go":          "package m\n",
		"wt/.env":                   "TOKEN=x\n",
		"wt/config/.env.production": "TOKEN=y\n",
		"wt/.git/config":            "[core]\n",
		"wt/.git/hooks/pre-commit":  "#!/bin/sh\n",
		"wt/.git/HEAD":              "ref: refs/heads/main\n",
		"outside/x.txt":             "x\n",
		"outside/secret.txt":        "secret\n",
	}
	for name, content := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(wt, "link-out")); err != nil {
		t.Fatal(err)
	}
	return wt
}

// Verdict is the case file's word for a decision.
func Verdict(allowed bool) string {
	if allowed {
		return "allow"
	}
	return "deny"
}
