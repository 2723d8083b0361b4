package github

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// node24Majors is the first major of each actions/* action the workflows
// may use whose action.yml says `runs.using: node24` throughout (read
// from each repository's tags: checkout v5.0.0, upload-artifact v6.0.0,
// download-artifact v7.0.0, cache v5.0.0; setup-go v6.0.0 and v6.1.0
// still said node20, so v7). The majors before them run on Node 20, which
// GitHub retires. The workflows are at the current majors (December 2026:
// checkout v7, setup-go v7, upload-artifact v7, download-artifact v8).
var node24Majors = map[string]int{ //nolint:gochecknoglobals // a table
	"actions/checkout":          5,
	"actions/setup-go":          7,
	"actions/upload-artifact":   6,
	"actions/download-artifact": 7,
	"actions/cache":             5,
	// v3.0.0 moved to node24 (.github/workflows/release.yml).
	"actions/attest-build-provenance": 3,
}

var usesRe = regexp.MustCompile(`(?m)^\s*-?\s*uses:\s*(actions/[\w.-]+)@v(\d+)`)

// TestWorkflowActionsRunOnNode24: every actions/* action that the example
// workflows, the act self-test workflow and action.yml use is at a Node 24
// major, and none is missing from the table.
func TestWorkflowActionsRunOnNode24(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "workflows", "*.yml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("workflows: %v %v", files, err)
	}
	files = append(files, filepath.Join("..", "e2e", "testdata", "act", "workflow.yml"), filepath.Join("..", "e2e", "testdata", "act", "install.yml"),
		filepath.Join("..", ".github", "workflows", "release.yml"), filepath.Join("..", "action.yml"))
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range usesRe.FindAllStringSubmatch(string(data), -1) {
			seen++
			major, _ := strconv.Atoi(m[2])
			first, ok := node24Majors[m[1]]
			switch {
			case !ok:
				t.Errorf("%s: %s@v%s: add the first major of %s that runs on node24 to node24Majors", f, m[1], m[2], m[1])
			case major < first:
				t.Errorf("%s: %s@v%s runs on Node 20: use v%d or later", f, m[1], m[2], first)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no actions/* step found: the pattern no longer matches the workflows")
	}
}

// TestActionScriptsPassShellcheck runs shellcheck over every run script of
// action.yml (as the bash its steps name runs them) and over the build
// script; actionlint checks the scripts of workflows, not of an action.
func TestActionScriptsPassShellcheck(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not installed (apt-get install shellcheck; bash .ci/run does this)")
	}
	data, err := os.ReadFile(filepath.Join("..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Runs struct {
			Steps []struct {
				Name  string `yaml:"name"`
				Shell string `yaml:"shell"`
				Run   string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	scripts := []string{filepath.Join("..", "scripts", "build-runner.sh"), filepath.Join("..", "scripts", "apparmor-userns.sh"),
		filepath.Join("..", "scripts", "install-runner.sh")}
	for i, s := range a.Runs.Steps {
		if s.Run == "" {
			continue
		}
		if s.Shell != "bash" {
			t.Errorf("step %q: shell %q, want bash (the scripts are bash)", s.Name, s.Shell)
		}
		f := filepath.Join(dir, "step"+strconv.Itoa(i+1)+".sh")
		// The header names the step in shellcheck's report.
		body := "#!/usr/bin/env bash\n# action.yml step " + strconv.Quote(s.Name) + "\n" + s.Run
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, f)
	}
	if len(scripts) < 4 {
		t.Fatalf("only %d scripts found in action.yml", len(scripts)-1)
	}
	out, err := exec.CommandContext(t.Context(), sc, append([]string{"--shell=bash", "--format=gcc"}, scripts...)...).CombinedOutput()
	if err != nil {
		t.Errorf("shellcheck: %v\n%s", err, strings.ReplaceAll(string(out), dir+"/", "action.yml:"))
	}
}
