package snapshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// randomBytes returns n pseudo-random bytes of a fixed seed: content that
// does not compress, so a literal costs its size.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b[:n]
}

// binaryRepo commits binary and text files, returns the work tree and
// the path of a clone of its base commit.
func binaryRepo(t *testing.T, files map[string][]byte) (wt, clone string) {
	t.Helper()
	wt = t.TempDir()
	git(t, wt, nil, "init", "-q", "-b", "main")
	for name, data := range files {
		writeFile(t, wt, name, string(data), 0o644)
	}
	git(t, wt, nil, "add", "-A")
	git(t, wt, nil, "commit", "-q", "-m", "base")
	clone = filepath.Join(t.TempDir(), "clone")
	git(t, filepath.Dir(clone), nil, "clone", "-q", wt, clone)
	return wt, clone
}

// applyInClone writes patch to a file and runs real `git apply --check`,
// then `git apply`, in the clone.
func applyInClone(t *testing.T, clone string, patch []byte, args ...string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "changes.patch")
	if err := os.WriteFile(p, patch, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, clone, nil, append(append([]string{"apply", "--check"}, args...), p)...)
	git(t, clone, nil, append(append([]string{"apply"}, args...), p)...)
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Errorf("%s (%d bytes) differs from %s (%d bytes)", a, len(x), b, len(y))
	}
}

// TestBinaryPatchDeltaAndLiteral changes binary files in each way a
// binary hunk can take (a small edit of a large file: a delta; a rewrite,
// an addition: a literal; a deletion) and applies the patch with real git
// to a fresh clone of the base, forwards and back with -R.
func TestBinaryPatchDeltaAndLiteral(t *testing.T) {
	isolateGit(t)
	ctx := context.Background()
	big := randomBytes(1, 256<<10)
	small := append([]byte{0}, randomBytes(2, 4095)...)
	wt, clone := binaryRepo(t, map[string][]byte{
		"big.bin": big, "small.bin": small, "rewrite.bin": randomBytes(3, 3000), "gone.bin": randomBytes(4, 500),
		"text.txt": []byte("one\ntwo\n"),
	})
	s := openStore(t, wt)
	base, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Clone(big)
	copy(edited[100_000:], "a few bytes in the middle")
	writeFile(t, wt, "big.bin", string(edited), 0o644)
	writeFile(t, wt, "small.bin", string(small)+"tail", 0o644)
	writeFile(t, wt, "rewrite.bin", string(randomBytes(5, 2000)), 0o644)
	writeFile(t, wt, "added.bin", string(append([]byte{0}, randomBytes(6, 700)...)), 0o644)
	writeFile(t, wt, "text.txt", "one\nthree\n", 0o644)
	if err := os.Remove(filepath.Join(wt, "gone.bin")); err != nil {
		t.Fatal(err)
	}
	tree, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var patch bytes.Buffer
	files, err := s.Patch(ctx, base, tree, &patch)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 6 {
		t.Fatalf("files = %+v, want 6", files)
	}
	for _, f := range files {
		if f.Omitted != nil {
			t.Errorf("%s omitted: %+v", f.Path, f.Omitted)
		}
	}
	text := patch.String()
	for _, want := range []string{"GIT binary patch\ndelta ", "GIT binary patch\nliteral "} {
		if !strings.Contains(text, want) {
			t.Errorf("patch has no %q hunk", want)
		}
	}
	// The 256 KiB file's delta is small; its literals would be 640 KB.
	if patch.Len() > 64<<10 {
		t.Errorf("patch is %d bytes: the large file's edit was not a delta", patch.Len())
	}
	applyInClone(t, clone, patch.Bytes())
	for _, name := range []string{"big.bin", "small.bin", "rewrite.bin", "added.bin", "text.txt"} {
		sameFile(t, filepath.Join(clone, name), filepath.Join(wt, name))
	}
	if _, err := os.Stat(filepath.Join(clone, "gone.bin")); !os.IsNotExist(err) {
		t.Errorf("gone.bin still in the clone: %v", err)
	}
	applyInClone(t, clone, patch.Bytes(), "-R")
	if got, _ := os.ReadFile(filepath.Join(clone, "big.bin")); !bytes.Equal(got, big) {
		t.Error("git apply -R did not restore big.bin")
	}
}

// TestBinaryPatchOmitted: a binary change over the limit is not in the
// patch but named at its top and recorded with its blob ids and sizes;
// the rest of the patch still applies with git, including the deletion
// of a file over the limit (which needs no content).
func TestBinaryPatchOmitted(t *testing.T) {
	isolateGit(t)
	ctx := context.Background()
	wt, clone := binaryRepo(t, map[string][]byte{
		"big.bin": randomBytes(1, 100<<10), "gone.bin": randomBytes(2, 80<<10), "text.txt": []byte("a\n"),
	})
	s, err := Open(ctx, Options{WorkTree: wt, StoreDir: filepath.Join(t.TempDir(), "store"), MaxBinaryPatch: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldBlob := strings.TrimSpace(git(t, wt, nil, "hash-object", "big.bin"))
	f, err := os.OpenFile(filepath.Join(wt, "big.bin"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("tail")
	_ = f.Close()
	newBlob := strings.TrimSpace(git(t, wt, nil, "hash-object", "big.bin"))
	writeFile(t, wt, "text.txt", "b\n", 0o644)
	if err := os.Remove(filepath.Join(wt, "gone.bin")); err != nil {
		t.Fatal(err)
	}
	tree, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var patch bytes.Buffer
	files, err := s.Patch(ctx, base, tree, &patch)
	if err != nil {
		t.Fatal(err)
	}
	var om *FileChange
	for i := range files {
		switch files[i].Path {
		case "big.bin":
			om = &files[i]
		case "gone.bin":
			if files[i].Omitted != nil || files[i].Status != "deleted" {
				t.Errorf("gone.bin = %+v, want a deletion in the patch", files[i])
			}
		}
	}
	if om == nil || om.Omitted == nil || !om.Binary {
		t.Fatalf("big.bin not recorded as omitted: %+v", files)
	}
	if o := om.Omitted; o.OldBlob != oldBlob || o.NewBlob != newBlob || o.OldSize != 100<<10 || o.NewSize != 100<<10+4 {
		t.Errorf("omitted = %+v, want blobs %s → %s, sizes %d → %d", o, oldBlob, newBlob, 100<<10, 100<<10+4)
	}
	text := patch.String()
	if !strings.HasPrefix(text, "runner: this patch does NOT carry 1 binary change") || !strings.Contains(text, "big.bin: old blob "+oldBlob) {
		t.Errorf("patch does not start with the note naming big.bin:\n%s", text)
	}
	if strings.Contains(text, "diff --git a/big.bin") {
		t.Error("the omitted file has a section")
	}
	applyInClone(t, clone, patch.Bytes())
	sameFile(t, filepath.Join(clone, "text.txt"), filepath.Join(wt, "text.txt"))
	if _, err := os.Stat(filepath.Join(clone, "gone.bin")); !os.IsNotExist(err) {
		t.Errorf("gone.bin is still in the clone: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(clone, "big.bin")); len(got) != 100<<10 {
		t.Errorf("big.bin in the clone is %d bytes, want the base's", len(got))
	}
	// Diff without a writer agrees.
	d, err := s.Diff(ctx, base, tree)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != len(files) {
		t.Errorf("Diff = %+v", d)
	}
}

// TestBinaryPatchFromUserPack: a binary base blob over the in-memory
// limit that lives in the user's pack file (git gc) is read lazily through
// the alternate and diffed into a delta that git applies.
func TestBinaryPatchFromUserPack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and diffs a 9 MiB binary (-short)")
	}
	isolateGit(t)
	ctx := context.Background()
	v1 := randomBytes(11, 9<<20)
	wt, _ := binaryRepo(t, map[string][]byte{"data.bin": v1})
	v2 := bytes.Clone(v1)
	copy(v2[1<<20:], "second version")
	writeFile(t, wt, "data.bin", string(v2), 0o644)
	git(t, wt, nil, "commit", "-qam", "v2")
	git(t, wt, nil, "gc", "-q")
	if packs, _ := filepath.Glob(filepath.Join(wt, ".git", "objects", "pack", "*.pack")); len(packs) == 0 {
		t.Fatal("git gc wrote no pack")
	}
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, filepath.Dir(clone), nil, "clone", "-q", wt, clone)
	s := openStore(t, wt)
	base, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v3 := bytes.Clone(v2)
	copy(v3[5<<20:], "third version")
	writeFile(t, wt, "data.bin", string(v3), 0o644)
	tree, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var patch bytes.Buffer
	if _, err := s.Patch(ctx, base, tree, &patch); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(patch.String(), "GIT binary patch\ndelta ") || patch.Len() > 64<<10 {
		t.Fatalf("patch (%d bytes) is not a small delta", patch.Len())
	}
	applyInClone(t, clone, patch.Bytes())
	sameFile(t, filepath.Join(clone, "data.bin"), filepath.Join(wt, "data.bin"))
}
