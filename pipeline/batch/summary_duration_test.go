package batch

import (
	"strings"
	"testing"
)

// TestSummaryDurations: the summary's Duration column shows a run under a
// second as milliseconds, never "0s", the way the console does.
func TestSummaryDurations(t *testing.T) {
	results := []RepoResult{{ID: "fast", Status: StatusSuccess, DurationMS: 412}, {ID: "slow", Status: StatusSuccess, DurationMS: 83_250}}
	got := RenderSummary("x", results, nil)
	for _, want := range []string{"| fast | success | ", " | 412ms | ", " | 1m23s | "} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, " | 0s | ") {
		t.Errorf("a sub-second run shows 0s:\n%s", got)
	}
}
