//go:build linux

package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// envLike is a stand-in for the pipeline's predicate: a path below root
// with a component that starts with ".env", in any case.
func envLike(root string) func(string) bool {
	return func(p string) bool {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return false
		}
		for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
			if strings.HasPrefix(strings.ToLower(c), ".env") {
				return true
			}
		}
		return false
	}
}

// walkDirProtected is the sequential filepath.WalkDir that FindProtected
// replaced: the oracle of the tests and the baseline of the benchmarks.
func walkDirProtected(root string, protected func(string) bool) []string {
	var out []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // an unreadable directory hides nothing
		}
		if d.IsDir() && strings.EqualFold(d.Name(), ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && protected(p) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func writeFile(t testing.TB, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// envTree builds a tree with .env entries in every awkward place: nested,
// ignored, a directory named .env, inside .git and .GIT, symlinks to a
// file and to a directory outside the tree that holds one.
func envTree(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "wt"), filepath.Join(base, "outside")
	for _, f := range []string{
		".env", ".gitignore", "a/.env.local", "a/b/c/.ENV.prod", "a/b/c/main.go",
		"build/.env", "build/deep/x/.env.copy", "node_modules/pkg/.env",
		".env.d/config", ".env.d/sub/key", "docs/readme.md",
		".git/.env", ".git/config", "x/.GIT/.env", "x/.gitkeep/.env",
	} {
		writeFile(t, filepath.Join(root, f), "K=v\n")
	}
	writeFile(t, filepath.Join(root, ".gitignore"), "build/\nnode_modules/\n.env*\n")
	writeFile(t, filepath.Join(outside, ".env"), "OUT=1\n")
	writeFile(t, filepath.Join(outside, "deep", ".env.x"), "OUT=2\n")
	for link, target := range map[string]string{
		"a/.env.link": filepath.Join(outside, ".env"), // a protected name: listed, not followed
		"linked":      outside,                        // a directory outside: not entered
		"a/loop":      root,                           // a loop back to the root: not entered
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func TestWatchProtectedMatchesFullWalk(t *testing.T) {
	root, outside := envTree(t)
	pred := envLike(root)
	want := walkDirProtected(root, pred)
	w, got, err := WatchProtected(root, pred)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !slices.Equal(got, want) {
		t.Fatalf("WatchProtected:\n got %q\nwant %q", got, want)
	}
	for _, must := range []string{".env", "a/.env.link", "a/b/c/.ENV.prod", "build/deep/x/.env.copy", "node_modules/pkg/.env", ".env.d/sub/key", "x/.gitkeep/.env"} {
		if !slices.Contains(got, filepath.Join(root, must)) {
			t.Errorf("%s not found in %q", must, got)
		}
	}
	for _, p := range got {
		if strings.HasPrefix(p, outside) || strings.Contains(p, "/.git/") || strings.Contains(p, "/.GIT/") || strings.Contains(p, "/linked/") || strings.Contains(p, "/loop/") {
			t.Errorf("%s found: a symlink was followed or a .git entered", p)
		}
	}
	// Files made before New takes the watch over are found without a walk:
	// in a new nested directory, in an ignored one, a new .env directory.
	for _, f := range []string{"new/n/.env.late", "build/.env.after", ".env.new/k"} {
		writeFile(t, filepath.Join(root, f), "L=1\n")
	}
	cw, found, err := startWatch(Policy{Watch: w, Protected: pred}, root)
	if err != nil {
		t.Fatal(err)
	}
	defer cw.close()
	if cw2, _, ok := w.take(root); ok || cw2 != nil {
		t.Fatal("the watch was handed over twice")
	}
	slices.Sort(found)
	all := walkDirProtected(root, pred)
	slices.Sort(all)
	if !slices.Equal(found, all) {
		t.Fatalf("after the hand-over:\n got %q\nwant %q (a full walk)", found, all)
	}
}

func TestWatchForAnotherTreeIsNotUsed(t *testing.T) {
	root, _ := envTree(t)
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "sub", ".env"), "O=1\n")
	w, _, err := WatchProtected(root, envLike(root))
	if err != nil {
		t.Fatal(err)
	}
	cw, found, err := startWatch(Policy{Watch: w, Protected: envLike(other)}, other)
	if err != nil {
		t.Fatal(err)
	}
	defer cw.close()
	if want := []string{filepath.Join(other, "sub", ".env")}; !slices.Equal(found, want) {
		t.Fatalf("found %q in the other tree, want %q", found, want)
	}
	if _, _, ok := w.take(root); ok {
		t.Fatal("a watch for another tree was left open")
	}
}

// benchTree makes files files in directories of 13 (about 1,900 for 25,000),
// three levels deep, one in 500 named .env.
func benchTree(b *testing.B, files int) string {
	b.Helper()
	root := b.TempDir()
	for i := range files {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", i/13/100), fmt.Sprintf("e%02d", i/13/10%10), fmt.Sprintf("f%d", i/13%10))
		name := fmt.Sprintf("file%d.go", i)
		if i%500 == 0 {
			name = ".env"
		}
		if i%13 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// BenchmarkSandboxSetupWalks compares, on a 25,000-file tree, what
// sandbox setup walks: before, the .env search (filepath.WalkDir) then
// the cover watch's own walk (two walks); now WatchProtected, handed to
// the sandbox (one walk). Run with -count: each count runs both.
func BenchmarkSandboxSetupWalks(b *testing.B) {
	root := benchTree(b, 25000)
	pred := envLike(root)
	want := len(walkDirProtected(root, pred))
	check := func(b *testing.B, n int) {
		b.Helper()
		if n != want {
			b.Fatalf("found %d, want %d", n, want)
		}
	}
	b.Run("old=walkdir+watch", func(b *testing.B) {
		for b.Loop() {
			check(b, len(walkDirProtected(root, pred)))
			w, found, err := startWatch(Policy{Protected: pred}, root)
			if err != nil {
				b.Fatal(err)
			}
			check(b, len(found))
			w.close()
		}
	})
	b.Run("new=watch+handover", func(b *testing.B) {
		for b.Loop() {
			pw, found, err := WatchProtected(root, pred)
			if err != nil {
				b.Fatal(err)
			}
			check(b, len(found))
			w, found, err := startWatch(Policy{Watch: pw, Protected: pred}, root)
			if err != nil {
				b.Fatal(err)
			}
			check(b, len(found))
			w.close()
		}
	})
}
