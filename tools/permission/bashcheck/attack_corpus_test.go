package bashcheck

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission/permtest"
)

// TestAttackCorpus runs testdata/attacks.jsonl, a set of attacks of the
// issue's kinds (about 200 inputs, built for this package: each "deny"
// line does something the realistic policy forbids, each "allow" line is
// an everyday command next to them), on the real-bash scratch tree.
func TestAttackCorpus(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("git is not installed: %v", err)
	}
	wt := scratchTree(t)
	cases := permtest.LoadCases(t, filepath.Join("testdata", "attacks.jsonl"))
	wrong := 0
	for _, c := range cases {
		v := Check(realistic(), wt, c.Command)
		if got := permtest.Verdict(v.Allowed); got != c.Expect {
			wrong++
			t.Errorf("%s: Check(%q) = %s, want %s\n  %s", c.Kind, c.Command, got, c.Expect, v.Reason)
		}
	}
	t.Logf("%d of %d attack inputs judged as expected", len(cases)-wrong, len(cases))
}
