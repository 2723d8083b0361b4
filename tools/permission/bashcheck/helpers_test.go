package bashcheck

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission"
	"github.com/seed43ef5acb/runner/tools/permission/permtest"
)

// Short names for the permission types and constants the tables use.
type (
	Rule    = permission.Rule
	Ruleset = permission.Ruleset
)

const (
	Bash              = permission.Bash
	Read              = permission.Read
	Edit              = permission.Edit
	ExternalDirectory = permission.ExternalDirectory
	DynamicArgs       = permission.DynamicArgs
	Allow             = permission.Allow
	Deny              = permission.Deny
	KindCommand       = permission.KindCommand
	KindRedirect      = permission.KindRedirect
	KindWrite         = permission.KindWrite
	KindPath          = permission.KindPath
	KindSyntax        = permission.KindSyntax
)

func caseTree(t testing.TB) string { t.Helper(); return permtest.CaseTree(t) }

func mustRules(t *testing.T, policy map[string]any) Ruleset {
	t.Helper()
	rs, err := permission.FromSpec(policy)
	if err != nil {
		t.Fatalf("FromSpec(%v): %v", policy, err)
	}
	return rs
}

// TestBashCases runs the shared bash cases (testdata/README.md): round 2
// (bash.jsonl), round 3 (bash-r3.jsonl) and our variants of their kinds
// (variants.jsonl).
func TestBashCases(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	var cases []permtest.Case
	for _, f := range []string{"bash.jsonl", "bash-r3.jsonl", "variants.jsonl"} {
		cases = append(cases, permtest.LoadCases(t, filepath.Join("testdata", f))...)
	}
	for _, c := range cases {
		t.Run(c.Kind+"/"+c.Command, func(t *testing.T) {
			v := Check(mustRules(t, c.Policy), wt, c.Command)
			if got := permtest.Verdict(v.Allowed); got != c.Expect {
				t.Errorf("Check(%q) = %s, want %s (%s)\nreason: %s\nchecks: %+v", c.Command, got, c.Expect, c.Why, v.Reason, v.Checks)
			}
			if len(v.Checks) == 0 || v.Reason == "" {
				t.Errorf("verdict carries no provenance: %+v", v)
			}
		})
	}
}

func TestExplainBash(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	tests := []struct {
		cmd      string
		verdict  string
		contains []string
	}{
		{"git status; rm -rf ~", "deny", []string{
			`deny: bash "git status; rm -rf ~"`, "allow  command   git status", `rule bash "git status": allow`,
			"deny   command   rm -rf ~", "default deny"}},
		{"go test ./... > src/out", "allow", []string{"redirect  src/out", `rule edit "src/**": allow`}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			e := Explain(strict(), wt, permission.Query{Permission: Bash, Target: tt.cmd})
			if e.Verdict != tt.verdict || e.Allowed != (tt.verdict == "allow") {
				t.Errorf("verdict = %s/%v, want %s", e.Verdict, e.Allowed, tt.verdict)
			}
			for _, want := range tt.contains {
				if !strings.Contains(e.Text(), want) {
					t.Errorf("Text() lacks %q:\n%s", want, e.Text())
				}
			}
		})
	}
}
