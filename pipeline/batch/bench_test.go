package batch

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkBatch runs 100 repositories × 5 scripted steps (each step
// writes a file, hashes it and sleeps 2 ms to model model latency) at
// concurrency 1 and 2 in the same run, and reports the speed-up of 2 over
// 1, the time of each and the peak heap. The clone cache is warmed first,
// so both concurrencies measure the same work: a fresh work tree copied
// from the cache, the executor, the results. Run it with
//
//	go test -run '^$' -bench Batch -benchtime 1x ./pipeline/batch
func BenchmarkBatch(b *testing.B) {
	const repos, steps = 100, 5
	dir := b.TempDir()
	spec := makeBatch(b, dir, repos, "")
	cache := filepath.Join(dir, "cache")
	warm := newFakeExec(func(string) behaviour { return noop })
	if _, err := Run(b.Context(), RunOptions{SpecPath: spec, Out: filepath.Join(dir, "warm"), CacheDir: cache, Executor: warm, Concurrency: 2}); err != nil {
		b.Fatal(err)
	}
	peak := startPeakSampler(b.Context())
	var took, cpu [3]time.Duration
	i := 0
	for b.Loop() {
		for _, conc := range []int{1, 2} {
			fe := newFakeExec(func(string) behaviour { return edit })
			fe.steps, fe.delay = steps, 2*time.Millisecond
			out := filepath.Join(dir, fmt.Sprintf("out-%d-c%d", i, conc))
			start, cpu0 := time.Now(), cpuTime()
			sum, err := Run(b.Context(), RunOptions{SpecPath: spec, Out: out, CacheDir: cache, Executor: fe, Concurrency: conc})
			took[conc] += time.Since(start)
			cpu[conc] += cpuTime() - cpu0
			if err != nil || sum.Counts[StatusSuccess] != repos {
				b.Fatalf("concurrency %d: %v, counts %v", conc, err, sum.Counts)
			}
		}
		i++
	}
	b.ReportMetric(took[1].Seconds()/float64(b.N), "s/batch-c1")
	b.ReportMetric(took[2].Seconds()/float64(b.N), "s/batch-c2")
	b.ReportMetric(float64(took[1])/float64(took[2]), "speedup")
	// CPU seconds of this process per batch: when it is far below the wall
	// time at concurrency 2, the machine was busy with other work.
	b.ReportMetric(cpu[1].Seconds()/float64(b.N), "cpu-s/batch-c1")
	b.ReportMetric(cpu[2].Seconds()/float64(b.N), "cpu-s/batch-c2")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Sys)/(1<<20), "sys-MB")
}

// startPeakSampler records the largest live heap seen, sampling every
// millisecond until ctx ends.
func startPeakSampler(ctx context.Context) *atomic.Uint64 {
	var peak atomic.Uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return &peak
}
