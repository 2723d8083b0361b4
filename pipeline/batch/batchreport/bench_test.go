package batchreport

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/seed43ef5acb/runner/pipeline/batch"
)

// BenchmarkReport10k loads and renders the report of a batch of 10,000
// repositories (results.jsonl, result.json and a patch each): the time and
// allocations of `runner batch report` on it, per format. The peer is what
// a batch writes today for the same results: batch.ReadResults and
// batch.RenderSummary (summary.md).
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
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rep, err := Load(b.Context(), dirs, Options{LinkBase: dir})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.Logf("the loaded report of %d repositories holds %.1f MB of heap", len(rep.Repos), float64(after.HeapAlloc-before.HeapAlloc)/1e6)
	b.Run("peer-summary.md", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			results, err := batch.ReadResults(dirs[0])
			if err != nil {
				b.Fatal(err)
			}
			latest := batch.Latest(results)
			list := make([]batch.RepoResult, 0, len(latest))
			for _, r := range results {
				if latest[r.ID] == r {
					list = append(list, r)
				}
			}
			_ = batch.RenderSummary("nightly", list, nil)
		}
	})
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
