package batchreport

import (
	"path/filepath"
	"testing"
)

// BenchmarkReport10k loads and renders the report of a batch of 10,000
// repositories (results.jsonl, result.json and a patch each): the time and
// allocations of `runner batch report` on it, per format.
func BenchmarkReport10k(b *testing.B) {
	dir := b.TempDir()
	dirs := genBatch{Name: "nightly", Repos: 10000, Seed: 9, Reruns: true}.write(b, filepath.Join(dir, "out"))
	b.Run("load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Load(b.Context(), dirs, Options{LinkBase: dir}); err != nil {
				b.Fatal(err)
			}
		}
	})
	rep, err := Load(b.Context(), dirs, Options{LinkBase: dir})
	if err != nil {
		b.Fatal(err)
	}
	for _, format := range []string{FormatHTML, FormatMarkdown, FormatJSON} {
		b.Run("render-"+format, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				out, err := Render(rep, format)
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.ReportMetric(float64(size), "bytes/report")
		})
	}
}
