package doclink

import (
	"maps"
	"slices"
	"testing"
)

// TestAnchors: headings become GitHub's anchors (case, punctuation,
// spaces); a # line inside a fence is not a heading.
func TestAnchors(t *testing.T) {
	doc := "# Post-run gates\n\n## Git tripwire\n\n### `exec`: what runs?\n\n```sh\n# not a heading\n```\n#not-a-heading\n"
	got := slices.Sorted(maps.Keys(Anchors(doc)))
	want := []string{"exec-what-runs", "git-tripwire", "post-run-gates"}
	if !slices.Equal(got, want) {
		t.Errorf("anchors %q, want %q", got, want)
	}
}

// TestURL: a page with and without an anchor.
func TestURL(t *testing.T) {
	if got, want := URL("gates.md", "secrets"), Base+"gates.md#secrets"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	if got, want := URL("gates.md", ""), Base+"gates.md"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
}
