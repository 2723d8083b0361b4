package gate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/seed43ef5acb/runner/internal/safefs"
)

// TestObjectStateChanges: a new loose object is no change (git add); a
// replaced loose object, a removed one and a new pack (which could shadow
// existing objects) are, and the new pack is removed.
func TestObjectStateChanges(t *testing.T) {
	base := t.TempDir()
	root, dir := safefs.New(base), filepath.Join(base, ".git", "objects")
	loose := filepath.Join(dir, "ce", "013625030ba8dba906f756967f9e9ca394464a")
	gone := filepath.Join(dir, "ab", "0123456789012345678901234567890123456789")
	mustWrite(t, loose, "x")
	mustWrite(t, gone, "y")
	st := readObjects(root, ".git/objects")
	if got := st.changes(root, ".git/objects"); len(got) != 0 {
		t.Fatalf("nothing changed, got %q", got)
	}
	mustWrite(t, filepath.Join(dir, "12", "3456789012345678901234567890123456789a"), "new loose")
	if got := st.changes(root, ".git/objects"); len(got) != 0 {
		t.Errorf("a new loose object is a change: %q", got)
	}
	if err := os.Remove(loose); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, loose, "replaced")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	pack := filepath.Join(dir, "pack", "pack-1.pack")
	mustWrite(t, pack, "PACK")
	mustWrite(t, filepath.Join(dir, "info", "commit-graph"), "CGPH")
	got := st.changes(root, ".git/objects")
	want := []string{".git/objects/ab/0123456789012345678901234567890123456789", ".git/objects/ce/013625030ba8dba906f756967f9e9ca394464a",
		".git/objects/info/commit-graph", ".git/objects/pack/pack-1.pack"}
	if !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
	if _, err := os.Stat(pack); !os.IsNotExist(err) {
		t.Errorf("the new pack is still there: %v", err)
	}
}
