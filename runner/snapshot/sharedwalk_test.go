package snapshot

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/internal/treewalk"
)

// TestSnapshotAndToolsWalkAgree: on random trees with ignore rules at two
// levels and no index, a snapshot holds exactly the files the search
// tools' walk (treewalk.Walk with the rules StartRules loads, as glob,
// grep and list run it) passes on: one walk, one answer to "is this path
// ignored?".
func TestSnapshotAndToolsWalkAgree(t *testing.T) {
	isolateGit(t)
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 77))
			wt := t.TempDir()
			git(t, wt, nil, "init", "-q")
			writeFile(t, wt, ".gitignore", rootIgnore, 0o644)
			writeFile(t, wt, "sub/.gitignore", subIgnore, 0o644)
			for range 60 {
				randomFile(t, r, wt)
			}
			if err := os.Symlink("a.txt", wt+"/sub/link"); err != nil {
				t.Fatal(err)
			}
			s := openStore(t, wt)
			tree, err := s.Track(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			snap := keysOf(treeFiles(t, s, tree))
			slices.Sort(snap)
			rules, prefix := treewalk.StartRules(wt, ".", os.Getenv)
			var walked []string
			err = treewalk.Walk(t.Context(), treewalk.Options{Root: wt, Start: ".", Prefix: prefix, Rules: rules}, func(e *treewalk.Entry) error {
				if !e.IsDir() {
					walked = append(walked, e.Rel)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(walked) // walk order lists "keep/a" before "keep.txt"
			if d := cmp.Diff(snap, walked); d != "" {
				t.Errorf("snapshot vs tools' walk (-snapshot +walk):\n%s", d)
			}
			if len(walked) < 20 {
				t.Errorf("only %d files walked: the tree is too small to compare", len(walked))
			}
		})
	}
}
