package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// applyAdvice matches a page telling the reader to apply a run's patch.
var applyAdvice = regexp.MustCompile("(?i)(git( -C \\S+)? apply [^\n]*changes\\.patch|apply (the|its) (patch|`changes\\.patch`))")

// TestDocApplySaysIsolate: a page that tells the reader to apply a run's
// changes.patch says, in that paragraph or the one before, that this is
// for an --isolate run (or another checkout). A run without --isolate has
// already changed the work tree, where the patch no longer applies.
func TestDocApplySaysIsolate(t *testing.T) {
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		paras := strings.Split(string(data), "\n\n")
		for i, p := range paras {
			if !applyAdvice.MatchString(p) {
				continue
			}
			context := p
			if i > 0 {
				context = paras[i-1] + "\n\n" + p
			}
			if !strings.Contains(context, "--isolate") && !strings.Contains(context, "another checkout") {
				t.Errorf("%s: tells to apply the patch without saying it is for an --isolate run or another checkout "+
					"(a run without --isolate already changed the work tree):\n%s", page, p)
			}
		}
	}
}
