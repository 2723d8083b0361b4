package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/runner/outdir"
)

// TestPatchExcerpt: a patch larger than MaxPatchExcerpt is read only so
// far, cut at a line end, and the summary says it shows a part and where
// the whole is; a small patch is shown whole.
func TestPatchExcerpt(t *testing.T) {
	dir := t.TempDir()
	line := "+" + strings.Repeat("x", 99) + "\n"
	big := "diff --git a/f b/f\n" + strings.Repeat(line, 10_000) // about 1 MB
	p := filepath.Join(dir, outdir.PatchFile)
	if err := os.WriteFile(p, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	ex, size, err := ReadPatchExcerpt(p)
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(len(big)) || len(ex) > MaxPatchExcerpt || !strings.HasSuffix(ex, "\n") || !strings.HasPrefix(big, ex) {
		t.Fatalf("excerpt %d bytes (size %d), want a line-cut prefix of at most %d of %d", len(ex), size, MaxPatchExcerpt, len(big))
	}
	md := Report{Task: "t"}.Markdown(MarkdownOptions{Patch: ex, PatchSize: size})
	if !strings.Contains(md, "first 256 KiB of 986 KiB") || !strings.Contains(md, "the whole patch (1010019 bytes) is in the run's changes.patch") {
		t.Errorf("summary does not say it shows part of the patch:\n%.600s", md)
	}
	if len(md) > MaxPatchExcerpt+4096 {
		t.Errorf("summary is %d bytes", len(md))
	}
	small := "diff --git a/f b/f\n+x\n"
	if err := os.WriteFile(p, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	ex, size, err = ReadPatchExcerpt(p)
	if err != nil || ex != small || size != int64(len(small)) {
		t.Fatalf("small patch: %q %d %v", ex, size, err)
	}
	if md := (Report{Task: "t"}).Markdown(MarkdownOptions{Patch: ex, PatchSize: size}); strings.Contains(md, "whole patch") {
		t.Errorf("a whole patch is said to be cut:\n%s", md)
	}
}
