package gitignore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRandomAgainstCheckIgnore generates random trees of files and
// .gitignore files and asks real git (`git check-ignore --no-index`)
// about every file and directory: PathExcluded must give git's answer.
func TestRandomAgainstCheckIgnore(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("git is not installed: %v", err)
	}
	for iter := range 12 {
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(7, uint64(iter)))
			wt := t.TempDir()
			gitCmd(t, wt, nil, "init", "-q")
			paths := map[string]bool{}
			for range 40 {
				p := randomPath(r)
				if writeIfFree(wt, p, "x") {
					paths[p] = false
					for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
						paths[d] = true
					}
				}
			}
			for _, dir := range []string{"", "a", "b/a", "ab"} {
				var pats []string
				for range 1 + r.IntN(5) {
					pats = append(pats, randomPattern(r))
				}
				writeIfFree(wt, filepath.Join(dir, ".gitignore"), strings.Join(pats, "\n")+"\n")
			}
			writeIfFree(wt, ".git/info/exclude", randomPattern(r)+"\n")
			repo, err := FindRepo(wt)
			if err != nil || repo == nil {
				t.Fatalf("FindRepo: %v %v", repo, err)
			}
			base := Base(repo, Config{})
			var list []string
			for p := range paths {
				list = append(list, p)
			}
			ignored := checkIgnore(t, wt, list)
			for p, isDir := range paths {
				if got := PathExcluded(wt, base, "", p, isDir); got != ignored[p] {
					t.Errorf("%s (dir %v): PathExcluded = %v, git check-ignore = %v", p, isDir, got, ignored[p])
				}
			}
		})
	}
}

// checkIgnore asks git which of paths are ignored.
func checkIgnore(t *testing.T, dir string, paths []string) map[string]bool {
	t.Helper()
	out := gitCmd(t, dir, []byte(strings.Join(paths, "\x00")+"\x00"), "check-ignore", "--no-index", "-z", "--stdin")
	got := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			got[p] = true
		}
	}
	return got
}

func gitCmd(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "XDG_CONFIG_HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && args[0] == "check-ignore" {
		err = nil // exit 1: nothing ignored
	}
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// writeIfFree writes a file unless a parent is a file or the path is a
// directory; it reports whether it wrote.
func writeIfFree(root, rel, content string) bool {
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false
	}
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		return false
	}
	return os.WriteFile(p, []byte(content), 0o644) == nil
}

func randomPath(r *rand.Rand) string {
	segs := []string{"a", "b", "ab", "ba", "a.c", "b.c", "x", "[a]", "a b", "#c", "!d"}
	var parts []string
	for range 1 + r.IntN(4) {
		parts = append(parts, segs[r.IntN(len(segs))])
	}
	return strings.Join(parts, "/")
}

func randomPattern(r *rand.Rand) string {
	atoms := []string{"a", "b", "*", "**", "?", "/", "[a-b]", "[!a]", "[^b]", ".c", "\\[a]", "x", "*/", "**/", "/**", " ", "\\ ", "\\#", "\\!"}
	var b strings.Builder
	if r.IntN(4) == 0 {
		b.WriteString("!")
	}
	for range 1 + r.IntN(4) {
		b.WriteString(atoms[r.IntN(len(atoms))])
	}
	return b.String()
}
