package snapshot

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryPatchStreamed changes files larger than streamLimit, which the
// patch streams instead of reading whole, in each way a hunk can take: an
// append, a prepend, an edit in the middle, a truncation (deltas of the
// common prefix and suffix), a rewrite and an addition (literals), a
// shrink below the limit; real git applies the patch to a clone of the
// base, forwards and back with -R.
func TestBinaryPatchStreamed(t *testing.T) {
	isolateGit(t)
	ctx := context.Background()
	const n = streamLimit + 1<<20
	files := map[string][]byte{}
	for i, name := range []string{"append.bin", "prepend.bin", "middle.bin", "truncate.bin", "rewrite.bin", "shrink.bin"} {
		files[name] = randomBytes(uint64(10+i), n)
	}
	wt, clone := binaryRepo(t, files)
	s := openStore(t, wt)
	base, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	middle := bytes.Clone(files["middle.bin"])
	copy(middle[n/2:], "a few bytes in the middle")
	changed := map[string][]byte{
		"append.bin":   append(bytes.Clone(files["append.bin"]), "tail"...),
		"prepend.bin":  append([]byte("head"), files["prepend.bin"]...),
		"middle.bin":   middle,
		"truncate.bin": files["truncate.bin"][:n-1000],
		"rewrite.bin":  randomBytes(20, n),
		"added.bin":    randomBytes(21, n),
		"shrink.bin":   files["shrink.bin"][:1000],
	}
	for name, data := range changed {
		writeFile(t, wt, name, string(data), 0o644)
	}
	tree, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var patch bytes.Buffer
	got, err := s.Patch(ctx, base, tree, &patch)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(changed) {
		t.Fatalf("files = %+v, want %d", got, len(changed))
	}
	// Deltas for the edits: the patch holds four sides' worth (rewrite's
	// both ways, added's, shrink's way back), in base85 lines (67 bytes
	// for 52), not fourteen.
	if max := int64(4 * n * 67 / 52 * 11 / 10); int64(patch.Len()) > max {
		t.Errorf("patch is %d bytes, want under %d: the edits were not deltas", patch.Len(), max)
	}
	if !strings.Contains(patch.String(), "GIT binary patch\ndelta ") {
		t.Error("patch has no delta hunk")
	}
	applyInClone(t, clone, patch.Bytes())
	for name := range changed {
		sameFile(t, filepath.Join(clone, name), filepath.Join(wt, name))
	}
	applyInClone(t, clone, patch.Bytes(), "-R")
	for name, data := range files {
		if b, _ := os.ReadFile(filepath.Join(clone, name)); !bytes.Equal(b, data) {
			t.Errorf("git apply -R did not restore %s", name)
		}
	}
	if _, err := os.Stat(filepath.Join(clone, "added.bin")); !os.IsNotExist(err) {
		t.Errorf("added.bin after git apply -R: %v", err)
	}
}

// TestDeltaCopyOps: copies longer than one op carries split, offsets and
// sizes take only their non-zero bytes.
func TestDeltaCopyOps(t *testing.T) {
	got := appendCopies(nil, 0x01000000, maxCopy+2)
	want := []byte{0x80 | 0x08 | 0x70, 0x01, 0xff, 0xff, 0xff, 0x80 | 0x0f | 0x10, 0xff, 0xff, 0xff, 0x01, 0x02}
	if !bytes.Equal(got, want) {
		t.Errorf("appendCopies = %x, want %x", got, want)
	}
}
