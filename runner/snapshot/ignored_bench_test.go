package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkIgnoredWritten measures the end-of-run search for files
// written in ignored paths next to the final snapshot's full Track (no
// change) on the same tree: 25,000 tracked files and an ignored
// node_modules of 25,000 more.
//
//	go test -run '^$' -bench IgnoredWritten -benchtime 5x ./runner/snapshot/
func BenchmarkIgnoredWritten(b *testing.B) {
	isolateGit(b)
	wt := b.TempDir()
	generateTree(b, wt, 25000)
	generateTree(b, filepath.Join(wt, "node_modules"), 25000)
	if err := os.WriteFile(filepath.Join(wt, ".gitignore"), []byte("node_modules/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	git(b, wt, nil, "init", "-q", "-b", "main")
	git(b, wt, nil, "add", "-A")
	git(b, wt, nil, "commit", "-q", "-m", "base")
	s := openBenchStore(b, wt)
	since := FileClock() // the tree was written seconds ago, by git and the first Track
	writeFile(b, wt, "node_modules/.bin/jest", "#!/bin/sh\n", 0o755)
	b.Run("ignored-written", func(b *testing.B) {
		for b.Loop() {
			got, err := s.IgnoredWritten(context.Background(), since, 100)
			if err != nil || got.Total != 1 {
				b.Fatalf("%+v, %v; want the payload alone", got, err)
			}
		}
	})
	b.Run("track-nochange", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Track(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
