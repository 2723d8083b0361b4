package gittest

import (
	"strings"
	"testing"
)

// TestRepo: a repository on main with one commit by the fixed identity,
// holding the files; Run returns git's trimmed output.
func TestRepo(t *testing.T) {
	dir := Repo(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	if got := Run(t, dir, "branch", "--show-current"); got != "main" {
		t.Errorf("branch %q, want main", got)
	}
	if got := Run(t, dir, "log", "--format=%an <%ae> %s"); got != "t <t@example.com> base" {
		t.Errorf("log %q", got)
	}
	if got := strings.Fields(Run(t, dir, "ls-files")); strings.Join(got, ",") != "a.txt,sub/b.txt" {
		t.Errorf("files %q", got)
	}
}
