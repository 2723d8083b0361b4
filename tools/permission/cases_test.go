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

// outdatedCases are the shared cases a later decision overrules, by path,
// with the expectation that stands and why.
var outdatedCases = map[string]struct{ expect, why string }{
	// Round 3 expected a denial; the decision that committed .env
	// templates (.env.example, .env.sample, .env.template, .env.dist) are
	// ordinary files came later and stands (EnvTemplate).
	"docs/.env.example": {"allow", "a committed .env template is an ordinary file"},
}

// TestPathCases runs testdata/paths.jsonl (round 2), paths-r3.jsonl
// (round 3) and paths-variants.jsonl (ours: more of the same kinds); the
// bash cases run in bashcheck.
func TestPathCases(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	var cases []permtest.Case
	for _, f := range []string{"paths.jsonl", "paths-r3.jsonl", "paths-variants.jsonl"} {
		cases = append(cases, permtest.LoadCases(t, filepath.Join("testdata", f))...)
	}
	for _, c := range cases {
		if o, ok := outdatedCases[c.Path]; ok {
			c.Expect, c.Why = o.expect, o.why
		}
		t.Run(c.Kind+"/"+c.Path, func(t *testing.T) {
			p := c.Path
			if rest, ok := strings.CutPrefix(p, "ABS:"); ok {
				p = JoinRaw(wt, rest) // uncleaned: the case may climb through a link
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
