package permission

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// caseLine is one line of testdata/bash.jsonl or testdata/paths.jsonl
// (copied from the shared cases; see testdata/README.md).
type caseLine struct {
	Policy     map[string]any `json:"policy"`
	Command    string         `json:"command"`
	Permission string         `json:"permission"`
	Path       string         `json:"path"`
	Expect     string         `json:"expect"`
	Kind       string         `json:"kind"`
	Why        string         `json:"why"`
}

func loadCases(t *testing.T, name string) []caseLine {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []caseLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c caseLine
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no cases", name)
	}
	return out
}

// caseTree builds the work tree the path cases describe: src/a.go,
// docs/x.md, vendor/m/m.go, .env, config/.env.production, .git/, and
// link-out, a symlink to a directory outside holding x.txt and secret.txt.
func caseTree(t *testing.T) string {
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
		"outside/x.txt":             "x\n",
		"outside/secret.txt":        "secret\n",
		"wt/.git/HEAD":              "ref: refs/heads/main\n",
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

func mustRules(t *testing.T, policy map[string]any) Ruleset {
	t.Helper()
	rs, err := FromSpec(policy)
	if err != nil {
		t.Fatalf("FromSpec(%v): %v", policy, err)
	}
	return rs
}

func TestBashCases(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	for _, c := range loadCases(t, "bash.jsonl") {
		t.Run(c.Kind+"/"+c.Command, func(t *testing.T) {
			v := CheckBash(mustRules(t, c.Policy), wt, c.Command)
			if got := verdictWord(v.Allowed); got != c.Expect {
				t.Errorf("CheckBash(%q) = %s, want %s (%s)\nreason: %s\nchecks: %+v", c.Command, got, c.Expect, c.Why, v.Reason, v.Checks)
			}
			if len(v.Checks) == 0 || v.Reason == "" {
				t.Errorf("verdict carries no provenance: %+v", v)
			}
		})
	}
}

func TestPathCases(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	for _, c := range loadCases(t, "paths.jsonl") {
		t.Run(c.Kind+"/"+c.Path, func(t *testing.T) {
			p := c.Path
			if rest, ok := strings.CutPrefix(p, "ABS:"); ok {
				p = filepath.Join(wt, rest)
			}
			d := CheckPath(mustRules(t, c.Policy), wt, c.Permission, p)
			if got := verdictWord(d.Allowed); got != c.Expect {
				t.Errorf("CheckPath(%s %q) = %s, want %s (%s)\nreason: %s", c.Permission, p, got, c.Expect, c.Why, d.Reason)
			}
			if d.Reason == "" {
				t.Errorf("decision has no reason: %+v", d)
			}
		})
	}
}

func verdictWord(allowed bool) string {
	if allowed {
		return "allow"
	}
	return "deny"
}
