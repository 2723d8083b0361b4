package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWalkMatchesGit compares the files glob sees with what git itself
// reports as untracked and not ignored, on a tree covering the gitignore
// features whose handling in go-git v5.19.3 is known to be faulty.
func TestWalkMatchesGit(t *testing.T) {
	t.Parallel()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed for this test: %v", err)
	}
	dir := tree(t, map[string]string{
		".gitignore": "*.log\n!keep.log\n/anchored.txt\ndocs/**/*.tmp\n**/cache/\n[!a]*.bak\n\\#hash\n" +
			"trail.txt   \nmid/dle.txt\nbuild/\n!build/keep.txt\ntwo/levels/deep.txt\n",
		"a.log": "", "keep.log": "", "anchored.txt": "", "sub/anchored.txt": "",
		"docs/x/y.tmp": "", "docs/y.tmp": "", "docs/keep.md": "", "x/cache/c": "", "cache/c": "", "cachefile": "",
		"a.bak": "", "b.bak": "", "#hash": "", "hash": "", "trail.txt": "", "mid/dle.txt": "", "x/mid/dle.txt": "",
		"build/keep.txt": "", "build/o.o": "", "two/levels/deep.txt": "", "two/levels/other.txt": "",
		"crlf/.gitignore": "*.gen\r\n!ok.gen\r\n", "crlf/a.gen": "", "crlf/ok.gen": "",
		"nested/.gitignore": "*\n!*.go\n!.gitignore\n", "nested/a.go": "", "nested/b.txt": "",
		"excluded-by-info.txt": "", "plain.txt": "",
	})
	git := func(args ...string) string {
		cmd := exec.CommandContext(t.Context(), gitBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte("excluded-by-info.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(git("ls-files", "--others", "--exclude-standard"))
	slices.Sort(want)
	res := run(t, tool(t, Env{WorkTree: dir}, "glob"), GlobParams{Pattern: "**"})
	got := strings.Split(res.Output, "\n")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("glob sees\n%s\ngit sees\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWalkInRepoSubdirectory: when the work tree is a subdirectory of a
// repository, the repository's info/exclude and the .gitignore files above
// the work tree apply, as they do for git and for snapshots.
func TestWalkInRepoSubdirectory(t *testing.T) {
	t.Parallel()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed for this test: %v", err)
	}
	repo := tree(t, map[string]string{
		".gitignore": "*.log\nsub/gen/\n", "sub/a.log": "", "sub/a.go": "", "sub/gen/x.go": "",
		"sub/[!a]x.txt": "", "sub/bx.txt": "", "sub/ax.txt": "", "sub/info.txt": "",
	})
	cmd := exec.CommandContext(t.Context(), gitBin, "init", "-q", repo)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte("info.txt\n[!a]x.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := run(t, tool(t, Env{WorkTree: filepath.Join(repo, "sub")}, "glob"), GlobParams{Pattern: "**"})
	got := strings.Split(res.Output, "\n")
	slices.Sort(got)
	want := []string{"[!a]x.txt", "a.go", "ax.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("glob in a repository subdirectory sees %q, want %q", got, want)
	}
}
