package batch

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
)

func TestClonerRefs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	gittest.Init(t, src, map[string]string{"f.txt": "one\n"})
	first := gittest.Run(t, src, "rev-parse", "HEAD")
	gittest.Run(t, src, "tag", "-a", "v1", "-m", "v1")
	gittest.Run(t, src, "checkout", "-q", "-b", "feature")
	write(t, filepath.Join(src, "f.txt"), "two\n")
	gittest.Run(t, src, "commit", "-q", "-am", "two")
	gittest.Run(t, src, "checkout", "-q", "main")
	tests := []struct {
		ref, url, want string
	}{
		{"", src, "one\n"},
		{"feature", src, "two\n"},
		{"v1", src, "one\n"}, // an annotated tag, peeled
		{first, src, "one\n"},
		{"", "file://" + src, "one\n"},
	}
	c := &cloner{dir: filepath.Join(dir, "cache"), depth: 1}
	for i, tt := range tests {
		repo := Repo{ID: "r" + string(rune('a'+i)), Ref: tt.ref}
		work := filepath.Join(dir, "work", repo.ID)
		commit, err := c.workTree(t.Context(), repo, tt.url, work)
		if err != nil {
			t.Fatalf("ref %q: %v", tt.ref, err)
		}
		if got := readFile(t, filepath.Join(work, "f.txt")); got != tt.want || len(commit) != 40 {
			t.Errorf("ref %q: f.txt = %q, commit %q; want %q", tt.ref, got, commit, tt.want)
		}
		if st := gittest.Run(t, work, "status", "--porcelain"); st != "" {
			t.Errorf("ref %q: work tree not clean:\n%s", tt.ref, st)
		}
	}
	if _, err := c.workTree(t.Context(), Repo{ID: "missing", Ref: "nope"}, src, filepath.Join(dir, "work", "x")); err == nil ||
		!strings.Contains(err.Error(), `ref "nope"`) {
		t.Errorf("unknown ref: %v", err)
	}
}

func TestClonerSharedCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	gittest.Init(t, src, map[string]string{"f.txt": "x\n"})
	c := &cloner{dir: filepath.Join(dir, "cache"), depth: 1}
	var wg sync.WaitGroup
	commits := make([]string, 4)
	errs := make([]error, 4)
	for i := range commits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			commits[i], errs[i] = c.workTree(t.Context(), Repo{ID: "same"}, src, filepath.Join(dir, "work", string(rune('a'+i))))
		}()
	}
	wg.Wait()
	for i := range commits {
		if errs[i] != nil || commits[i] != commits[0] {
			t.Errorf("worker %d: %q %v", i, commits[i], errs[i])
		}
	}
	entries, _ := os.ReadDir(c.dir)
	if len(entries) != 2 || entries[0].Name() != "same.git" || entries[1].Name() != "same.git.lock" {
		t.Errorf("cache holds %v, want only same.git and its lock file", entries)
	}
}

// TestClonerAdoptsEarlierLayout: an entry an earlier version cached at
// <cache>/<id>.git is moved to <cache>/clones/<id>.git and refreshed, not
// cloned again; the old path is gone, so the cache holds one copy.
func TestClonerAdoptsEarlierLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	gittest.Init(t, src, map[string]string{"f.txt": "x\n"})
	cache := filepath.Join(dir, "cache")
	old := &cloner{dir: cache, depth: 1}
	if _, err := old.workTree(t.Context(), Repo{ID: "app"}, src, filepath.Join(dir, "w1")); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(cache, "app.git", "adopted-marker")
	write(t, marker, "x")
	c := &cloner{dir: filepath.Join(cache, clonesDir), depth: 1}
	if _, err := c.workTree(t.Context(), Repo{ID: "app"}, src, filepath.Join(dir, "w2")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cacheEntry(cache, "app"), "adopted-marker")); err != nil {
		t.Errorf("the earlier entry was not moved into %s: %v", cacheEntry(cache, "app"), err)
	}
	if _, err := os.Stat(filepath.Join(cache, "app.git")); !os.IsNotExist(err) {
		t.Errorf("the earlier entry is still at %s (%v)", filepath.Join(cache, "app.git"), err)
	}
	if got := readFile(t, filepath.Join(dir, "w2", "f.txt")); got != "x\n" {
		t.Errorf("work tree from the adopted entry: f.txt = %q", got)
	}
}
