package snapshot

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIgnoreRandomAgainstGit generates random ignore patterns and paths
// and checks that the snapshot keeps exactly the files git lists. The
// round count follows SNAPSHOT_PROPERTY_ITERS (default 4).
func TestIgnoreRandomAgainstGit(t *testing.T) {
	isolateGit(t)
	for iter := range propertyIters(t) {
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			r := rand.New(rand.NewPCG(42, uint64(iter)))
			wt := t.TempDir()
			git(t, wt, nil, "init", "-q")
			for range 40 {
				p := randomIgnorePath(r)
				if !isDirPath(wt, p) && !blockedByFile(wt, p) {
					writeFile(t, wt, p, "x", 0o644)
				}
			}
			for _, dir := range []string{"", "a", "b/a"} {
				var pats []string
				for range 1 + r.IntN(5) {
					pats = append(pats, randomPattern(r))
				}
				if !blockedByFile(wt, joinRel(dir, ".gitignore")) && !isDirPath(wt, joinRel(dir, ".gitignore")) {
					writeFile(t, wt, joinRel(dir, ".gitignore"), strings.Join(pats, "\n")+"\n", 0o644)
				}
			}
			s := openStore(t, wt)
			tree, err := s.Track(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			all := dirDigest(t, wt, nil)
			got := keysOf(treeFiles(t, s, tree))
			t.Logf("%d of %d files ignored", len(all)-len(got), len(all))
			if d := cmp.Diff(gitFileSet(t, wt), got); d != "" {
				t.Errorf("file set (-git +snapshot):\n%s", d)
			}
		})
	}
}

func randomIgnorePath(r *rand.Rand) string {
	segs := []string{"a", "b", "ab", "ba", "a.c", "b.c", "x", "[a]", "a b"}
	var parts []string
	for range 1 + r.IntN(4) {
		parts = append(parts, segs[r.IntN(len(segs))])
	}
	return strings.Join(parts, "/")
}

func randomPattern(r *rand.Rand) string {
	atoms := []string{"a", "b", "*", "**", "?", "/", "[a-b]", "[!a]", "[^b]", ".c", "\\[a]", "x", "*/", "**/", "/**", " ", "\\ "}
	var b strings.Builder
	if r.IntN(4) == 0 {
		b.WriteString("!")
	}
	for range 1 + r.IntN(4) {
		b.WriteString(atoms[r.IntN(len(atoms))])
	}
	return b.String()
}
