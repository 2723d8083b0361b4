package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/runner/event"
)

func track(t *testing.T, s *Store) Tree {
	t.Helper()
	tree, err := s.Track(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func TestNestedRepositoriesAreGitlinks(t *testing.T) {
	isolateGit(t)
	wt := t.TempDir()
	git(t, wt, nil, "init", "-q")
	writeFile(t, wt, "top.txt", "top\n", 0o644)
	nested := filepath.Join(wt, "nested")
	writeFile(t, nested, "inner.txt", "inner\n", 0o644)
	git(t, nested, nil, "init", "-q")
	git(t, nested, nil, "add", "-A")
	git(t, nested, nil, "commit", "-q", "-m", "inner")
	head := strings.TrimSpace(git(t, nested, nil, "rev-parse", "HEAD"))
	writeFile(t, wt, "empty-repo/f", "x\n", 0o644)
	git(t, filepath.Join(wt, "empty-repo"), nil, "init", "-q")

	s := openStore(t, wt)
	got := treeFiles(t, s, track(t, s))
	want := map[string]uint32{"top.txt": modeFile, "nested": modeGitlink}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("files (-want +got):\n%s", d)
	}
	es, err := s.readTree(mustHash(t, track(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.name == "nested" && e.hash.String() != head {
			t.Errorf("gitlink = %s, want HEAD %s", e.hash, head)
		}
	}
}

func mustHash(t *testing.T, tree Tree) [20]byte {
	t.Helper()
	h, err := parseTree(tree)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestPlainDirectoryAndSpecialFiles(t *testing.T) {
	isolateGit(t)
	wt := t.TempDir()
	writeFile(t, wt, ".gitignore", "*.o\n", 0o644)
	writeFile(t, wt, "main.c", "int main;\n", 0o644)
	writeFile(t, wt, "main.o", "obj", 0o644)
	writeFile(t, wt, "run", "#!/bin/sh\n", 0o755)
	writeFile(t, wt, "out/result.json", "{}", 0o644)
	writeFile(t, wt, "sub/.git", "gitdir: /nonexistent\n", 0o644) // broken gitfile: not a repo, skipped
	if err := os.Symlink("main.c", filepath.Join(wt, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing", filepath.Join(wt, "dangling")); err != nil {
		t.Fatal(err)
	}
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "unix", filepath.Join(wt, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s := openStore(t, wt, "out")
	got := treeFiles(t, s, track(t, s))
	want := map[string]uint32{".gitignore": modeFile, "main.c": modeFile, "run": modeExec, "link": modeSymlink, "dangling": modeSymlink}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("files (-want +got):\n%s", d)
	}
}

func TestEmptyTreeAndTrackPathsFallback(t *testing.T) {
	isolateGit(t)
	wt := t.TempDir()
	s := openStore(t, wt)
	// No previous state: TrackPaths walks.
	tree, err := s.TrackPaths(context.Background(), []string{"nothing"})
	if err != nil {
		t.Fatal(err)
	}
	if tree != EmptyTree {
		t.Fatalf("empty dir tree = %s, want %s", tree, EmptyTree)
	}
	writeFile(t, wt, "a/b/c.txt", "c\n", 0o644)
	tree, err = s.TrackPaths(context.Background(), []string{filepath.Join(wt, "a/b/c.txt"), "../outside", ".git/x"})
	if err != nil {
		t.Fatal(err)
	}
	if full := track(t, s); full != tree {
		t.Fatalf("TrackPaths = %s, Track = %s", tree, full)
	}
	os.RemoveAll(filepath.Join(wt, "a"))
	if tree, err = s.TrackPaths(context.Background(), []string{"a/b/c.txt"}); err != nil || tree != EmptyTree {
		t.Fatalf("after delete: %s, %v; want the empty tree", tree, err)
	}
	var buf bytes.Buffer
	changes, err := s.Patch(context.Background(), EmptyTree, EmptyTree, &buf)
	if err != nil || len(changes) != 0 || buf.Len() != 0 {
		t.Fatalf("empty patch: %v %v %q", changes, err, buf.String())
	}
	if _, err := s.Diff(context.Background(), "nothex", EmptyTree); !errors.Is(err, ErrBadTree) {
		t.Fatalf("bad tree error = %v, want ErrBadTree", err)
	}
}

func TestStatCacheDetectsSameSizeRewrite(t *testing.T) {
	isolateGit(t)
	wt := t.TempDir()
	writeFile(t, wt, "f.txt", "aaaa\n", 0o644)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(wt, "f.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, wt)
	first := track(t, s)
	// Same size, same mtime: only ctime (and content) differ.
	if err := os.WriteFile(filepath.Join(wt, "f.txt"), []byte("bbbb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(wt, "f.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	if second := track(t, s); second == first {
		t.Fatal("a same-size rewrite with the old mtime was missed")
	}
	// A new Store reads the persisted cache and still sees the change.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(context.Background(), Options{WorkTree: wt, StoreDir: s.storeDir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if third := track(t, s2); third == first {
		t.Fatal("reopened store returned the stale tree")
	}
}

func TestOpenLocksTheStore(t *testing.T) {
	isolateGit(t)
	wt := t.TempDir()
	s := openStore(t, wt)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := Open(ctx, Options{WorkTree: wt, StoreDir: s.storeDir}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Open = %v, want a deadline error while locked", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(context.Background(), Options{WorkTree: wt, StoreDir: s.storeDir})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s2.Close()
	if _, err := s.Track(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Track after Close = %v, want ErrClosed", err)
	}
	if _, err := Open(context.Background(), Options{WorkTree: wt, StoreDir: filepath.Join(wt, "store")}); !errors.Is(err, ErrStoreInWorkTree) {
		t.Fatalf("store inside work tree = %v, want ErrStoreInWorkTree", err)
	}
}

// TestOpenSaysItWaits: a second Open of a locked store calls OnWait once,
// with the holder's "pid N", before it waits, and returns once the holder
// closes; an Open that does not wait never calls it.
func TestOpenSaysItWaits(t *testing.T) {
	isolateGit(t)
	wt := t.TempDir()
	var calls atomic.Int32
	first, err := Open(t.Context(), Options{WorkTree: wt, StoreDir: filepath.Join(t.TempDir(), "store"),
		OnWait: func(string) { calls.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan string, 2)
	opened := make(chan error, 1)
	go func() {
		s2, err := Open(t.Context(), Options{WorkTree: wt, StoreDir: first.storeDir, OnWait: func(h string) { waiting <- h }})
		if err == nil {
			err = s2.Close()
		}
		opened <- err
	}()
	select {
	case h := <-waiting:
		if want := fmt.Sprintf("pid %d", os.Getpid()); h != want {
			t.Errorf("holder %q, want %q", h, want)
		}
	case err := <-opened:
		t.Fatalf("second Open returned (%v) without waiting", err)
	case <-time.After(time.Minute):
		t.Fatal("OnWait was not called within a minute")
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("Open after the holder closed: %v", err)
	}
	if len(waiting) != 0 || calls.Load() != 0 {
		t.Errorf("OnWait called again (%d more) or by the Open that did not wait (%d)", len(waiting), calls.Load())
	}
}

func TestSubdirectoryWorkTreeAndSeeding(t *testing.T) {
	isolateGit(t)
	repo := t.TempDir()
	git(t, repo, nil, "init", "-q")
	writeFile(t, repo, ".gitignore", "*.tmp\n", 0o644)
	writeFile(t, repo, "pkg/a.go", "package a\n", 0o644)
	writeFile(t, repo, "pkg/b.tmp", "tmp\n", 0o644)
	writeFile(t, repo, "pkg/forced.tmp", "forced\n", 0o644)
	writeFile(t, repo, "other/c.go", "package c\n", 0o644)
	git(t, repo, nil, "add", "-A")
	git(t, repo, nil, "add", "-f", "pkg/forced.tmp")
	git(t, repo, nil, "commit", "-q", "-m", "x")
	time.Sleep(10 * time.Millisecond)
	git(t, repo, nil, "update-index", "--really-refresh") // index newer than the files: entries not racy
	s := openStore(t, filepath.Join(repo, "pkg"))
	before := track(t, s)
	got := treeFiles(t, s, before)
	want := map[string]uint32{"a.go": modeFile, "forced.tmp": modeFile}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("files (-want +got):\n%s", d)
	}
	// Seeded: the blobs came from the user's index, so none were copied.
	if n := storedObjects(t, s); n != 1 { // the one tree
		t.Errorf("store holds %d objects, want only the tree (seeded blobs stay in the user's store)", n)
	}
	var buf bytes.Buffer
	writeFile(t, repo, "pkg/a.go", "package a // changed\n", 0o644)
	after, err := s.TrackPaths(context.Background(), []string{"a.go"})
	if err != nil {
		t.Fatal(err)
	}
	changes, err := s.Patch(context.Background(), before, after, &buf)
	if err != nil {
		t.Fatal(err)
	}
	wantChanges := []FileChange{{Path: "a.go", Status: event.ChangeModified, OldMode: modeFile, NewMode: modeFile, Additions: 1, Deletions: 1}}
	if d := cmp.Diff(wantChanges, changes); d != "" {
		t.Fatalf("changes (-want +got):\n%s", d)
	}
	if !strings.Contains(buf.String(), "-package a\n+package a // changed\n") {
		t.Fatalf("patch:\n%s", buf.String())
	}
}

func TestQuotePath(t *testing.T) {
	tests := map[string]string{
		"plain/name.go": "plain/name.go",
		"with space":    "with space",
		"tab\tname":     `"tab\tname"`,
		`quo"te`:        `"quo\"te"`,
		`back\slash`:    `"back\\slash"`,
		"ünï":           `"\303\274n\303\257"`,
		"bell\a\x7f":    `"bell\a\177"`,
	}
	for in, want := range tests {
		if got := quotePath(in); got != want {
			t.Errorf("quotePath(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestLinkedWorktree(t *testing.T) {
	isolateGit(t)
	primary := t.TempDir()
	git(t, primary, nil, "init", "-q", "-b", "main")
	writeFile(t, primary, ".gitignore", "*.log\n", 0o644)
	writeFile(t, primary, "a.txt", "a\n", 0o644)
	git(t, primary, nil, "add", "-A")
	git(t, primary, nil, "commit", "-q", "-m", "x")
	writeFile(t, primary, ".git/info/exclude", "local.txt\n", 0o644)
	linked := filepath.Join(t.TempDir(), "linked")
	git(t, primary, nil, "worktree", "add", "-q", "-b", "side", linked)
	writeFile(t, linked, "local.txt", "excluded through the common dir\n", 0o644)
	writeFile(t, linked, "x.log", "ignored\n", 0o644)
	writeFile(t, linked, "new.txt", "new\n", 0o644)
	gitHash := hashTree(t, filepath.Join(primary, ".git"))
	s := openStore(t, linked)
	if s.repo == nil || s.repo.CommonDir != filepath.Join(primary, ".git") {
		t.Fatalf("repo = %+v, want the common dir of %s", s.repo, primary)
	}
	tree := track(t, s)
	if d := cmp.Diff(gitFileSet(t, linked), keysOf(treeFiles(t, s, tree))); d != "" {
		t.Errorf("file set (-git +snapshot):\n%s", d)
	}
	if hashTree(t, filepath.Join(primary, ".git")) != gitHash {
		t.Error("the main repository's .git changed")
	}
}

// TestContentFiltersDisableSeeding: with core.autocrlf or a text
// attribute the index holds LF content while the disk holds CRLF, so the
// snapshot must hash the disk bytes instead of reusing index hashes.
func TestContentFiltersDisableSeeding(t *testing.T) {
	isolateGit(t)
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, wt string)
	}{
		{"autocrlf", func(t *testing.T, wt string) { t.Helper(); git(t, wt, nil, "config", "core.autocrlf", "true") }},
		{"gitattributes", func(t *testing.T, wt string) {
			t.Helper()
			writeFile(t, wt, ".gitattributes", "*.txt text eol=crlf\n", 0o644)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wt := t.TempDir()
			git(t, wt, nil, "init", "-q")
			tt.setup(t, wt)
			writeFile(t, wt, "f.txt", "one\r\ntwo\r\n", 0o644)
			git(t, wt, nil, "add", "-A")
			git(t, wt, nil, "commit", "-q", "-m", "x")
			time.Sleep(10 * time.Millisecond)
			git(t, wt, nil, "update-index", "--really-refresh")
			s := openStore(t, wt)
			es, err := s.readTree(mustHash(t, track(t, s)))
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			for _, e := range es {
				if e.name == "f.txt" {
					if got, err = s.objects.read(plumbing.BlobObject, e.hash); err != nil {
						t.Fatal(err)
					}
				}
			}
			if string(got) != "one\r\ntwo\r\n" {
				t.Fatalf("snapshot content %q, want the CRLF bytes on disk", got)
			}
		})
	}
}

// storedObjects counts the objects in s's store directory: loose ones and
// those of its completed packs.
func storedObjects(t *testing.T, s *Store) int {
	t.Helper()
	loose, _ := filepath.Glob(filepath.Join(s.storeDir, "objects", "??", "*"))
	n := len(loose)
	idxs, _ := filepath.Glob(filepath.Join(s.storeDir, "objects", "pack", "pack-*.idx"))
	for _, idx := range idxs {
		hs, err := readIdxHashes(idx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(hs)
	}
	return n
}
