package permission

import (
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// TestMatchGlobAsDoublestar checks MatchGlob's shortcut for "**/X" gives
// doublestar's answer.
func TestMatchGlobAsDoublestar(t *testing.T) {
	t.Parallel()
	pats := []string{"**/*.go", "**/a", "**/.env*", "**/{a,b}.go", "**/[ab]?", "**/*", "**/", "**/**", "**/a/*.go", "*.go", "**/\\*.go"}
	paths := []string{"a", "a.go", "x/a.go", "x/y/a", "x/b.go", ".env", "d/.env.local", "ab", "x/ab", "a/x.go", "*.go", "x/*.go", "x/", ""}
	for _, p := range pats {
		for _, s := range paths {
			want, err := doublestar.Match(p, s)
			want = want && err == nil
			if got := MatchGlob(p, s); got != want {
				t.Errorf("MatchGlob(%q, %q) = %v, doublestar says %v", p, s, got, want)
			}
		}
	}
}

// TestDotComponents checks the components RunnerState and ProtectedKind
// look at.
func TestDotComponents(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"a/b/c":            "",
		".runner":          ".runner|",
		"a/.git/x/.env":    ".git|.env|",
		".a/b/.c/d.e/.f/g": ".a|.c|.f|",
		"a.b/c./.":         ".|",
	}
	for rel, want := range cases {
		got := ""
		for c := range dotComponents(rel) {
			got += c + "|"
		}
		if got != want {
			t.Errorf("dotComponents(%q) = %q, want %q", rel, got, want)
		}
	}
	if !RunnerState("x/y/.RUNNER/runs") || RunnerState("x/runner/.runnerx") || ProtectedKind("d/.env.d/x") != ".env" || ProtectedKind("a/.env.example") != "" {
		t.Error("RunnerState or ProtectedKind changed answer")
	}
}
