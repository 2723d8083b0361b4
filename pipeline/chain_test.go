package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/historyfile"
)

func TestChainHelpers(t *testing.T) {
	if got := tableCell("a | b\n<script>x</script>"); got != `a \| b &lt;script&gt;x&lt;/script&gt;` {
		t.Errorf("tableCell = %q", got)
	}
	long := strings.Repeat("é", promptMax+10)
	if got := cutPrompt("one\ntwo  " + long); len([]rune(got)) != promptMax || !strings.HasPrefix(got, "one two ") || !strings.HasSuffix(got, "…") {
		t.Errorf("cutPrompt: %d runes, %q…", len([]rune(got)), got[:12])
	}
	one := 0.5
	s := chainSpent([]historyfile.ChainRun{{Steps: 2, Tokens: event.Tokens{Input: 10, Output: 5}, CostUSD: &one}, {Steps: 1, Tokens: event.Tokens{Input: 1}}})
	if s.Runs != 2 || s.Steps != 3 || s.Tokens != 16 || s.CostUSD != nil {
		t.Errorf("chainSpent = %+v, want the cost unknown when one run's is", s)
	}
	patch := filepath.Join(t.TempDir(), "p.patch")
	mustWrite(t, patch, "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new\n+more\n ctx\ndiff --git a/y b/y\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+y\n")
	if f, a, d := patchStat(patch); f != 2 || a != 3 || d != 1 {
		t.Errorf("patchStat = %d files +%d -%d, want 2 +3 -1", f, a, d)
	}
	row := chainRow("1", historyfile.ChainRun{Prompt: "fix | it", Status: event.StatusBudgetExceeded, Files: 1, Additions: 2, URL: "https://x/runs/1"})
	if row != "| [1](https://x/runs/1) | fix \\| it | budget exceeded | 1 file, +2 −0 |\n" {
		t.Errorf("chainRow = %q", row)
	}
}
