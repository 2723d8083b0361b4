package snapshot

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sparseSize is the file of the read-limit tests: 1 TiB made with
// truncate, which takes no disk. Read, it would take hours (the test
// binary's timeout fails the test); not read, it costs a stat.
const sparseSize = 1 << 40

// TestFilesOverTheReadLimitAreNotRead: a snapshot does not read a file over
// UnhashedLimit (`truncate -s 3G` kept the runner hashing and
// compressing for 46 s per snapshot, past limits.timeout; 1 TiB is hours).
// Its id carries its size, no object is stored for it, an unchanged file
// is no change, a touched or deleted one is a change the patch leaves out
// (the note says it was not read), and NotRead names it for later readers.
func TestFilesOverTheReadLimitAreNotRead(t *testing.T) {
	ctx := context.Background()
	wt := t.TempDir()
	writeFile(t, wt, "small.txt", "hello\n", 0o644)
	big := filepath.Join(wt, "big.bin")
	writeFile(t, wt, "big.bin", "x", 0o644)
	if err := os.Truncate(big, sparseSize); err != nil {
		t.Skipf("this file system takes no 1 TiB sparse file: %v", err)
	}
	gone := filepath.Join(wt, "gone.bin")
	writeFile(t, wt, "gone.bin", "y", 0o644)
	if err := os.Truncate(gone, UnhashedLimit+1); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, wt)
	base, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files := treeFiles(t, s, base)
	if len(files) != 3 {
		t.Fatalf("base tree has %v, want big.bin, gone.bin and small.txt", keysOf(files))
	}
	id := s.state.entries[s.state.find("big.bin")].hash
	if n, ok := unhashedSize(id); !ok || n != sparseSize {
		t.Fatalf("big.bin's id %s carries size %d (unhashed %v), want an unhashed id of %d bytes", id, n, ok, int64(sparseSize))
	}
	if du := storeBytes(t, s.Dir()); du > 1<<20 {
		t.Errorf("the store holds %d bytes after the first snapshot: the big files were stored", du)
	}

	// Nothing changed: the same ids, an empty diff.
	again, err := s.Track(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff, err := s.Diff(ctx, base, again); err != nil || len(diff) != 0 {
		t.Fatalf("diff of an unchanged tree = %+v, %v; want none", diff, err)
	}

	// Touched (content unknown: a change), and a deletion.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(big, later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	cur, err := s.TrackPaths(ctx, []string{"big.bin", "gone.bin"})
	if err != nil {
		t.Fatal(err)
	}
	var patch bytes.Buffer
	changes, err := s.Patch(ctx, base, cur, &patch)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 {
		t.Fatalf("changes = %+v, want big.bin changed and gone.bin deleted", changes)
	}
	for _, c := range changes {
		o := c.Omitted
		if o == nil || !strings.Contains(o.Reason, "not read") {
			t.Errorf("%s: omitted = %+v, want left out as not read", c.Path, o)
			continue
		}
		if o.OldBlob != "" || o.NewBlob != "" {
			t.Errorf("%s: omitted names blobs %q, %q: an unhashed id is no blob", c.Path, o.OldBlob, o.NewBlob)
		}
		if want := c.Path == "big.bin"; NotRead(o) != want {
			t.Errorf("%s: NotRead = %v, want %v", c.Path, NotRead(o), want)
		}
	}
	text := patch.String()
	if !strings.Contains(text, "runner:   big.bin: old not read (1099511627776 bytes), new not read (1099511627776 bytes)") ||
		strings.Contains(text, "diff --git") {
		t.Errorf("patch = %q, want only the note naming both sides as not read", text)
	}
}

// TestHashingStopsWithTheContext: reading a large file for its hash ends
// between blocks when the context does (the final snapshot runs on a
// deadline of its own).
func TestHashingStopsWithTheContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 64<<20); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	open := func() (*os.File, error) { return os.Open(p) }
	if _, n, err := hashFileStream(ctx, open, p, discard{}); !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("hashFileStream after cancel = %d bytes, %v; want 0 bytes, context.Canceled", n, err)
	}
	if _, n, err := hashFileStream(context.Background(), open, p, discard{}); err != nil || n != 64<<20 {
		t.Errorf("hashFileStream = %d bytes, %v; want the whole file", n, err)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// storeBytes sums the sizes of the files under dir.
func storeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
