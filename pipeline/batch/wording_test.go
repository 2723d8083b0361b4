package batch

import (
	"strings"
	"testing"
)

// TestRepositoryCounts: every count of repositories in messages and
// summaries agrees with its number ("1 repository … has", "2
// repositories … have").
func TestRepositoryCounts(t *testing.T) {
	t.Parallel()
	one := (&MergeReport{Missing: []string{"a"}}).Problems()
	two := (&MergeReport{Missing: []string{"a", "b"}}).Problems()
	if len(one) != 1 || one[0] != "1 repository of the manifest has no result: a" {
		t.Errorf("one missing: %q", one)
	}
	if len(two) != 1 || two[0] != "2 repositories of the manifest have no result: a, b" {
		t.Errorf("two missing: %q", two)
	}
	for n, want := range map[int]string{1: "## Batch x: 1 repository, ", 2: "## Batch x: 2 repositories, "} {
		results := make([]RepoResult, n)
		for i := range results {
			results[i] = RepoResult{ID: string(rune('a' + i)), Status: StatusSuccess, CostUSD: usd(0.5)}
		}
		if got := RenderSummary("x", results, nil); !strings.HasPrefix(got, want) {
			t.Errorf("summary of %d: %q, want it to start with %q", n, got, want)
		}
	}
	if got := Repositories(0); got != "0 repositories" {
		t.Errorf("Repositories(0) = %q", got)
	}
}
