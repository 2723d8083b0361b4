package permission

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission/permtest"
)

func caseTree(t *testing.T) string { t.Helper(); return permtest.CaseTree(t) }

func mustRules(t *testing.T, policy map[string]any) Ruleset {
	t.Helper()
	rs, err := FromSpec(policy)
	if err != nil {
		t.Fatalf("FromSpec(%v): %v", policy, err)
	}
	return rs
}

// TestPathCases runs testdata/paths.jsonl; the bash cases run in bashcheck.
func TestPathCases(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	for _, c := range permtest.LoadCases(t, filepath.Join("testdata", "paths.jsonl")) {
		t.Run(c.Kind+"/"+c.Path, func(t *testing.T) {
			p := c.Path
			if rest, ok := strings.CutPrefix(p, "ABS:"); ok {
				p = filepath.Join(wt, rest)
			}
			d := CheckPath(mustRules(t, c.Policy), wt, c.Permission, p)
			if got := permtest.Verdict(d.Allowed); got != c.Expect {
				t.Errorf("CheckPath(%s %q) = %s, want %s (%s)\nreason: %s", c.Permission, p, got, c.Expect, c.Why, d.Reason)
			}
			if d.Reason == "" {
				t.Errorf("decision has no reason: %+v", d)
			}
		})
	}
}
