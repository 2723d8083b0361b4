package snapshot

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// SNAPSHOT_PROPERTY_ITERS sets the number of random rounds (default 4);
// it is read by the test only, independent of -short.
func propertyIters(t *testing.T) int {
	t.Helper()
	if v := os.Getenv("SNAPSHOT_PROPERTY_ITERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("SNAPSHOT_PROPERTY_ITERS: %v", err)
		}
		return n
	}
	return 4
}

var propDirs = []string{"", "sub", "sub/deep", "docs/x", "build", "cache", "a/cache", "dir with space", "ünï", "tab\tdir", "keep"}

var propNames = []string{
	"a.txt", "b.go", "x.log", "keep.log", "keep.txt", "important.txt", "anch", "f", "b.bak", "a.bak",
	"#hash", "y.tmp", "z.txt", "name with space.md", "tab\tname", "quote\"d", "back\\slash", "ünïcødé.txt",
	"trailing ", "run.sh", "data.bin", "empty", "CRLF.txt", "noeol.txt",
}

const rootIgnore = "*.log\n!keep.log\nbuild/\n!build/keep.txt\n/anch\n**/cache/\n[!a]*.bak\n\\#hash\ndocs/**/*.tmp\ntrailing\\ \n"
const subIgnore = "!*.log\n*.txt\n!important.txt\ndeep/\n!deep/\n"

// TestPropertyPatchApplies makes random edits and checks that the patch
// between two snapshots applies with git to a pristine checkout and
// reproduces the work tree, that the snapshot's file set is git's, and
// that the user's .git is untouched.
func TestPropertyPatchApplies(t *testing.T) {
	isolateGit(t)
	seed := uint64(1)
	if v := os.Getenv("SNAPSHOT_PROPERTY_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	for iter := range propertyIters(t) {
		t.Run(fmt.Sprint("seed", seed, "iter", iter), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(iter)))
			runProperty(t, r, iter%2 == 1)
		})
	}
}

func runProperty(t *testing.T, r *rand.Rand, fast bool) {
	t.Helper()
	ctx := context.Background()
	wt := t.TempDir()
	git(t, wt, nil, "init", "-q", "-b", "main")
	writeFile(t, wt, ".gitignore", rootIgnore, 0o644)
	writeFile(t, wt, "sub/.gitignore", subIgnore, 0o644)
	for range 25 {
		randomFile(t, r, wt)
	}
	writeFile(t, wt, "tracked.log", "tracked but ignored\n", 0o644)
	git(t, wt, nil, "add", "-A")
	git(t, wt, nil, "add", "-f", "tracked.log")
	git(t, wt, nil, "commit", "-q", "-m", "base")
	for range 5 {
		randomFile(t, r, wt) // untracked files too
	}
	gitHash := hashTree(t, filepath.Join(wt, ".git"))

	s := openStore(t, wt)
	a, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkFileSet(t, s, a, wt)
	pristine := checkout(t, s, a)

	var touched []string
	for range 1 + r.IntN(12) {
		touched = append(touched, randomEdit(t, r, wt)...)
	}
	var b Tree
	if fast {
		b, err = s.TrackPaths(ctx, touched)
		if err != nil {
			t.Fatal(err)
		}
		full, err := s.Track(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if full != b {
			t.Fatalf("TrackPaths(%q) = %s, full Track = %s\n%s", touched, b, full, cmp.Diff(keysOf(treeFiles(t, s, full)), keysOf(treeFiles(t, s, b))))
		}
	} else if b, err = s.Track(ctx); err != nil {
		t.Fatal(err)
	}
	checkFileSet(t, s, b, wt)
	checkPatchApplies(t, s, a, b, pristine, wt)
	if got := hashTree(t, filepath.Join(wt, ".git")); got != gitHash {
		t.Fatal("the user's .git changed")
	}
}

func checkFileSet(t *testing.T, s *Store, tree Tree, wt string) {
	t.Helper()
	want := gitFileSet(t, wt)
	got := keysOf(treeFiles(t, s, tree))
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("file set differs from git's (-git +snapshot):\n%s", d)
	}
}

func checkPatchApplies(t *testing.T, s *Store, a, b Tree, pristine, wt string) {
	t.Helper()
	patchFile := filepath.Join(t.TempDir(), "changes.patch")
	f, err := os.Create(patchFile)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := s.Patch(context.Background(), a, b, f)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	diffChanges, err := s.Diff(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(changes, diffChanges); d != "" {
		t.Errorf("Diff and Patch disagree:\n%s", d)
	}
	t.Logf("%d changed files", len(changes))
	if len(changes) > 0 {
		git(t, pristine, nil, "apply", "--check", patchFile)
		git(t, pristine, nil, "apply", patchFile)
	}
	snapB := treeFiles(t, s, b)
	want := dirDigest(t, wt, snapB)
	got := dirDigest(t, pristine, nil)
	if d := cmp.Diff(want, got); d != "" {
		patch, _ := os.ReadFile(patchFile)
		t.Fatalf("applied patch differs from the work tree (-work tree +applied):\n%s\npatch:\n%s", d, patch)
	}
}

func randomPath(r *rand.Rand) string {
	return joinRel(propDirs[r.IntN(len(propDirs))], propNames[r.IntN(len(propNames))])
}

func randomContent(r *rand.Rand, name string) (string, os.FileMode) {
	switch {
	case strings.HasSuffix(name, ".bin"):
		b := make([]byte, 20+r.IntN(3000))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		b[r.IntN(len(b))] = 0
		return string(b), 0o644
	case name == "empty":
		return "", 0o644
	case strings.HasSuffix(name, ".sh"):
		return "#!/bin/sh\necho hi\n", 0o755
	}
	var b strings.Builder
	eol := "\n"
	if strings.HasPrefix(name, "CRLF") || r.IntN(8) == 0 {
		eol = "\r\n"
	}
	for i := range 1 + r.IntN(40) {
		fmt.Fprintf(&b, "line %d %d ünï%s", i, r.IntN(5), eol)
	}
	s := b.String()
	if name == "noeol.txt" || r.IntN(5) == 0 {
		s = strings.TrimSuffix(s, eol)
	}
	return s, 0o644
}

func randomFile(t *testing.T, r *rand.Rand, wt string) string {
	t.Helper()
	p := randomPath(r)
	if isDirPath(wt, p) || blockedByFile(wt, p) {
		return ""
	}
	c, perm := randomContent(r, p)
	writeFile(t, wt, p, c, perm)
	return p
}

func isDirPath(wt, p string) bool {
	fi, err := os.Lstat(filepath.Join(wt, p))
	return err == nil && fi.IsDir()
}

// blockedByFile reports whether a parent of p is a file or symlink.
func blockedByFile(wt, p string) bool {
	for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(wt, d)); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// existingFile picks a random file or symlink in the work tree.
func existingFile(r *rand.Rand, wt string) string {
	var files []string
	_ = filepath.WalkDir(wt, func(p string, d os.DirEntry, err error) error { // errors are skipped inside
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() != ".gitignore" {
			rel, _ := filepath.Rel(wt, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(files) == 0 {
		return ""
	}
	return files[r.IntN(len(files))]
}

// randomEdit makes one edit and returns the paths it touched.
func randomEdit(t *testing.T, r *rand.Rand, wt string) []string {
	t.Helper()
	p := existingFile(r, wt)
	if p == "" {
		return []string{randomFile(t, r, wt)}
	}
	abs := filepath.Join(wt, p)
	switch r.IntN(9) {
	case 0:
		return []string{randomFile(t, r, wt)}
	case 1: // modify some lines
		b, _ := os.ReadFile(abs)
		lines := strings.SplitAfter(string(b), "\n")
		for range 1 + r.IntN(3) {
			i := r.IntN(len(lines))
			switch r.IntN(3) {
			case 0:
				lines[i] = fmt.Sprintf("changed %d\n", r.IntN(100))
			case 1:
				lines = append(lines[:i], lines[i+1:]...)
				if len(lines) == 0 {
					lines = []string{""}
				}
			default:
				lines = append(lines[:i], append([]string{"inserted\n"}, lines[i:]...)...)
			}
		}
		os.Remove(abs)
		if err := os.WriteFile(abs, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	case 2:
		os.Remove(abs)
	case 3: // rename
		dst := randomPath(r)
		if isDirPath(wt, dst) || blockedByFile(wt, dst) || dst == p {
			return nil
		}
		_ = os.MkdirAll(filepath.Dir(filepath.Join(wt, dst)), 0o755) // a failure shows in the rename
		os.Remove(filepath.Join(wt, dst))
		if err := os.Rename(abs, filepath.Join(wt, dst)); err != nil {
			t.Fatal(err)
		}
		return []string{p, dst}
	case 4: // chmod
		fi, err := os.Lstat(abs)
		if err == nil && fi.Mode().IsRegular() {
			_ = os.Chmod(abs, fi.Mode().Perm()^0o111) // best effort, as the other operations
		}
	case 5: // file <-> symlink
		fi, _ := os.Lstat(abs)
		os.Remove(abs)
		if fi != nil && fi.Mode()&os.ModeSymlink != 0 {
			writeFile(t, wt, p, "was a link\n", 0o644)
		} else if err := os.Symlink("target/"+filepath.Base(p), abs); err != nil {
			t.Fatal(err)
		}
	case 6: // binary
		writeFile(t, wt, p, "\x00\x01binary"+strconv.Itoa(r.IntN(1000)), 0o644)
	case 7: // empty
		writeFile(t, wt, p, "", 0o644)
	default: // a nested ignore file with negations
		d := propDirs[r.IntN(len(propDirs))]
		writeFile(t, wt, joinRel(d, ".gitignore"), "*.md\n!name*\nf\n", 0o644)
		return []string{joinRel(d, ".gitignore")}
	}
	return []string{p}
}
