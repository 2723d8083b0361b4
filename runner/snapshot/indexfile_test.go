package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/google/go-cmp/cmp"
)

// TestParseIndexFastMatchesGoGit compares the fast index reader with
// go-git's decoder on indexes git wrote in versions 2, 3 (extended flags
// from intent-to-add) and 4 (which the fast reader leaves to go-git).
func TestParseIndexFastMatchesGoGit(t *testing.T) {
	isolateGit(t)
	for _, tt := range []struct {
		version string
		fast    bool
	}{{"2", true}, {"3", true}, {"4", false}} {
		t.Run("v"+tt.version, func(t *testing.T) {
			wt := t.TempDir()
			git(t, wt, nil, "init", "-q")
			writeFile(t, wt, "a.txt", "a\n", 0o644)
			writeFile(t, wt, "dir/b.sh", "b\n", 0o755)
			writeFile(t, wt, strings.Repeat("long/", 60)+"name", "x", 0o644)
			git(t, wt, nil, "add", "-A")
			writeFile(t, wt, "n.txt", "intent\n", 0o644)
			git(t, wt, nil, "add", "-N", "n.txt")
			git(t, wt, nil, "update-index", "--index-version", tt.version)
			data, err := os.ReadFile(filepath.Join(wt, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]trackedFile{}
			err = parseIndexFast(data, func(name string, tf trackedFile) { got[name] = tf })
			if !tt.fast {
				if err == nil {
					t.Fatal("fast reader accepted a version 4 index")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var idx index.Index
			if err := index.NewDecoder(bytes.NewReader(data)).Decode(&idx); err != nil {
				t.Fatal(err)
			}
			want := map[string]trackedFile{}
			for _, e := range idx.Entries {
				want[e.Name] = trackedFile{mode: uint32(e.Mode), hash: e.Hash, seedOK: e.Stage == 0 && !e.IntentToAdd && !e.SkipWorktree,
					st: statInfo{size: int64(e.Size), mtime: unixNano(e.ModifiedAt), ctime: unixNano(e.CreatedAt), ino: e.Inode}}
			}
			if d := cmp.Diff(want, got, cmp.AllowUnexported(trackedFile{}, statInfo{})); d != "" {
				t.Fatalf("fast reader (-go-git +fast):\n%s", d)
			}
			if got["n.txt"].seedOK {
				t.Error("intent-to-add entry marked seedable")
			}
		})
	}
}

func FuzzParseIndexFast(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01" + strings.Repeat("\x00", 62) + strings.Repeat("\x00", 20)))
	f.Add([]byte("DIRC\x00\x00\x00\x03\x00\x00\x00\x00link\x00\x00\x00\x00" + strings.Repeat("\x00", 20)))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = parseIndexFast(data, func(string, trackedFile) {})
	})
}
