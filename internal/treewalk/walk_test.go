package treewalk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sample is a tree with ignore rules at two levels, a .git, a nested
// repository, a symlink and an ignored directory holding a negation.
func sample(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write(t, root, ".git/HEAD", "ref: refs/heads/main\n")
	write(t, root, ".gitignore", "*.log\nbuild/\n")
	write(t, root, "a.txt", "a")
	write(t, root, "x.log", "x")
	write(t, root, "b/.gitignore", "!keep.log\nz*\n")
	write(t, root, "b/keep.log", "k")
	write(t, root, "b/zed.txt", "z")
	write(t, root, "b/c/d.go", "d")
	write(t, root, "build/.gitignore", "!*.log\n")
	write(t, root, "build/out.log", "o")
	write(t, root, "build/sub/o.txt", "o")
	write(t, root, "nested/.git/HEAD", "ref: refs/heads/main\n")
	write(t, root, "nested/n.txt", "n")
	if err := os.Symlink("a.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	return root
}

func noEnv(string) string { return "" }

func walkRels(t *testing.T, opt Options) []string {
	t.Helper()
	var got []string
	err := Walk(t.Context(), opt, func(e *Entry) error {
		got = append(got, fmt.Sprintf("%s %d %v %v", e.Rel, e.Depth, e.Type, e.Ignored))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWalkOrderAndRules: entries come in lexical, depth-first order with
// git's ignore rules applied (a nested .gitignore's negation re-includes,
// nothing inside an ignored directory is visited), .git skipped, symlinks
// not followed, the same with one worker as with four.
func TestWalkOrderAndRules(t *testing.T) {
	root := sample(t)
	rules, prefix := StartRules(root, ".", noEnv)
	want := []string{
		".gitignore 1 ---------- false",
		"a.txt 1 ---------- false",
		"b 1 d--------- false",
		"b/.gitignore 2 ---------- false",
		"b/c 2 d--------- false",
		"b/c/d.go 3 ---------- false",
		"b/keep.log 2 ---------- false",
		"link 1 L--------- false",
		"nested 1 d--------- false",
		"nested/n.txt 2 ---------- false",
	}
	for _, workers := range []int{1, 4} {
		got := walkRels(t, Options{Root: root, Start: ".", Prefix: prefix, Rules: rules, Workers: workers})
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%d workers: (-want +got)\n%s", workers, d)
		}
	}
	// A start below the root gets its parents' rules.
	rules, prefix = StartRules(root, "b", noEnv)
	got := walkRels(t, Options{Root: root, Start: "b", Prefix: prefix, Rules: rules})
	if d := cmp.Diff([]string{"b/.gitignore 1 ---------- false", "b/c 1 d--------- false", "b/c/d.go 2 ---------- false", "b/keep.log 1 ---------- false"}, got); d != "" {
		t.Errorf("start b: (-want +got)\n%s", d)
	}
	// An ignored start is walked with only the rules inside it.
	if rules, _ = StartRules(root, "build", noEnv); rules != nil {
		t.Errorf("rules for an ignored start: %v, want none", rules)
	}
}

// TestWalkVisitAll: a Visit that keeps everything sees ignored entries
// marked, and inside a descended ignored directory every entry is ignored
// (its .gitignore is not read: git does not look inside); StopAtRepos
// stops at the nested repository.
func TestWalkVisitAll(t *testing.T) {
	root := sample(t)
	rules, _ := StartRules(root, ".", noEnv)
	all := func(*Dir, *Entry) Action { return Descend }
	got := walkRels(t, Options{Root: root, Start: ".", Rules: rules, Visit: all, StopAtRepos: true})
	for _, l := range []string{"x.log 1 ---------- true", "build 1 d--------- true", "build/out.log 2 ---------- true", "build/sub/o.txt 3 ---------- true", "b/zed.txt 2 ---------- true", "nested 1 d--------- false"} {
		if !slices.Contains(got, l) {
			t.Errorf("missing %q in\n%s", l, strings.Join(got, "\n"))
		}
	}
	if slices.Contains(got, "nested/n.txt 2 ---------- false") {
		t.Errorf("StopAtRepos walked into the nested repository:\n%s", strings.Join(got, "\n"))
	}
}

// TestTreePostOrder: Tree runs Work for every kept file and Post for each
// directory only after the Post of every directory below it, with the
// results in place, on one worker and on four.
func TestTreePostOrder(t *testing.T) {
	root := sample(t)
	rules, _ := StartRules(root, ".", noEnv)
	for _, workers := range []int{1, 4} {
		var mu sync.Mutex
		posted := map[string]bool{}
		var bad []string
		top, err := Tree(t.Context(), Options{
			Root: root, Start: ".", Rules: rules, Workers: workers, StopAtRepos: true,
			Work: func(dirfd int, _ *Dir, e *Entry) any { return e.Rel + "!" },
			Post: func(d *Dir) {
				mu.Lock()
				defer mu.Unlock()
				n := 0
				for _, e := range d.Entries {
					switch {
					case e.Dir != nil && !posted[e.Dir.Rel]:
						bad = append(bad, d.Rel+" before "+e.Dir.Rel)
					case e.Dir == nil && e.Result != e.Rel+"!":
						bad = append(bad, e.Rel+" has no result")
					}
					n++
				}
				d.Data = n
				posted[d.Rel] = true
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(bad) > 0 || !posted["."] || !posted["b/c"] || !posted["nested"] || top.Data != 5 {
			t.Errorf("%d workers: %v, posted %v, top has %v entries", workers, bad, posted, top.Data)
		}
	}
}

// TestWalkStops: fs.SkipDir skips a directory, fs.SkipAll ends the walk
// without an error, a cancelled context ends it with its cause, and a
// missing start directory is an error (for Tree: the start's Err).
func TestWalkStops(t *testing.T) {
	root := sample(t)
	rules, _ := StartRules(root, ".", noEnv)
	var got []string
	err := Walk(t.Context(), Options{Root: root, Start: ".", Rules: rules}, func(e *Entry) error {
		got = append(got, e.Rel)
		switch e.Rel {
		case "b":
			return fs.SkipDir
		case "link":
			return fs.SkipAll
		}
		return nil
	})
	if err != nil || !slices.Equal(got, []string{".gitignore", "a.txt", "b", "link"}) {
		t.Errorf("skips: %v, %v", got, err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	boom := errors.New("boom")
	cancel(boom)
	if err := Walk(ctx, Options{Root: root, Start: "."}, func(*Entry) error { return nil }); !errors.Is(err, boom) {
		t.Errorf("cancelled walk: %v, want %v", err, boom)
	}
	if _, err := Tree(ctx, Options{Root: root, Start: "."}); !errors.Is(err, boom) {
		t.Errorf("cancelled tree: %v, want %v", err, boom)
	}
	if err := Walk(t.Context(), Options{Root: root, Start: "missing"}, func(*Entry) error { return nil }); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing start: %v", err)
	}
	top, err := Tree(t.Context(), Options{Root: root, Start: "missing", Post: func(d *Dir) { d.Data = "posted" }})
	if err != nil || !errors.Is(top.Err, fs.ErrNotExist) || top.Data != "posted" {
		t.Errorf("missing start tree: %+v, %v", top, err)
	}
}
