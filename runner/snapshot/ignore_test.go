package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFileSetMatchesGit checks the snapshot's file set against
// `git ls-files` + `git ls-files -o --exclude-standard` on fixtures aimed
// at the places stock go-git gets wrong.
func TestFileSetMatchesGit(t *testing.T) {
	home := isolateGit(t)
	tests := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, wt string)
	}{
		{name: "negated class", files: map[string]string{
			".gitignore": "[!a]*.bak\n[^x]y\n", "a.bak": "", "b.bak": "", "xy": "", "zy": "",
		}},
		{name: "no re-include inside excluded dir", files: map[string]string{
			".gitignore":     "build/\n!build/keep.txt\nout/*\n!out/keep.txt\n",
			"build/keep.txt": "", "build/x": "", "out/keep.txt": "", "out/x": "",
		}},
		{name: "anchors, double stars, dir-only", files: map[string]string{
			".gitignore": "/anch\n**/cache/\ndocs/**/*.tmp\nmid/dle\nd*/\n",
			"anch":       "", "sub/anch": "", "cache/f": "", "x/cache/f": "", "y/cache": "",
			"docs/a.tmp": "", "docs/x/y/b.tmp": "", "mid/dle": "", "q/mid/dle": "", "dfile": "", "dir/f": "",
		}},
		{name: "escapes, trailing spaces, CRLF, BOM", files: map[string]string{
			".gitignore": "\xef\xbb\xbf\\#hash\r\n\\!bang\r\nsp\\ \r\nts   \r\n# comment\r\n",
			"#hash":      "", "!bang": "", "sp ": "", "ts": "", "# comment": "", "keep": "",
		}},
		{name: "nested negation and precedence", files: map[string]string{
			".gitignore": "*.log\n*.txt\n", "a.log": "", "sub/.gitignore": "!*.log\nx.log\n",
			"sub/a.log": "", "sub/x.log": "", "sub/deep/.gitignore": "!x.log\n", "sub/deep/x.log": "", "sub/deep/y.txt": "",
		}},
		{name: "literal prefix quirk", files: map[string]string{
			".gitignore": "x/a**\n", "x/ab/c": "", "x/abc": "", "x/b": "", "y/a/b": "",
		}},
		{name: "info exclude and core.excludesFile", files: map[string]string{
			"ex.txt": "", "glob.txt": "", "keep.txt": "",
		}, setup: func(t *testing.T, wt string) {
			t.Helper()
			writeFile(t, wt, ".git/info/exclude", "ex.txt\n", 0o644)
			writeFile(t, home, "myignore", "glob.txt\n", 0o644)
			git(t, wt, nil, "config", "core.excludesFile", filepath.Join(home, "myignore"))
		}},
		{name: "XDG default excludes file", files: map[string]string{
			"xdg.txt": "", "keep.txt": "",
		}, setup: func(t *testing.T, wt string) {
			t.Helper()
			writeFile(t, home, ".config/git/ignore", "xdg.txt\n", 0o644)
			t.Cleanup(func() { os.Remove(filepath.Join(home, ".config/git/ignore")) })
		}},
		{name: "tracked but ignored and ignored dir with tracked file", files: map[string]string{
			".gitignore": "*.log\nvendor/\n", "t.log": "", "vendor/tracked.go": "", "vendor/untracked.go": "",
		}, setup: func(t *testing.T, wt string) {
			t.Helper()
			git(t, wt, nil, "add", "-f", "t.log", "vendor/tracked.go")
		}},
		{name: "symlinked gitignore is not followed", files: map[string]string{
			"real": "a\n", "a": "",
		}, setup: func(t *testing.T, wt string) {
			t.Helper()
			if err := os.Symlink("real", filepath.Join(wt, ".gitignore")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wt := t.TempDir()
			git(t, wt, nil, "init", "-q")
			for p, c := range tt.files {
				writeFile(t, wt, p, c, 0o644)
			}
			if tt.setup != nil {
				tt.setup(t, wt)
			}
			s := openStore(t, wt)
			tree, err := s.Track(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(gitFileSet(t, wt), keysOf(treeFiles(t, s, tree))); d != "" {
				t.Errorf("file set (-git +snapshot):\n%s", d)
			}
		})
	}
}
