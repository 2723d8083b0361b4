//go:build unix

package batch

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
)

// BenchmarkBatchScale runs batches of 100 and 1,000 local repositories
// (RUNNER_BENCH_REPOS=100,1000,3000 for other sizes) through the real
// executor, replaying one cassette (a write tool call, then a final
// message) with the task's default sandbox, at concurrency 2, on a warm
// clone cache. It reports CPU per repository (this process and its
// children) and the peak heap; run one size per process to read
// peak-rss-MB:
//
//	go test -run '^$' -bench 'BatchScale/repos=1000$' -benchtime 1x ./pipeline/batch
//
// Flat cost per repository means cpu-ms/repo does not grow with the size.
func BenchmarkBatchScale(b *testing.B) {
	sizes := []int{100, 1000}
	if env := os.Getenv("RUNNER_BENCH_REPOS"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("RUNNER_BENCH_REPOS=%q: want sizes like 100,1000", env)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("repos=%d", n), func(b *testing.B) { benchBatchScale(b, n) })
	}
}

func benchBatchScale(b *testing.B, n int) {
	b.Helper()
	dir := b.TempDir()
	spec, cassette := scaleBatch(b, dir, n)
	cache := filepath.Join(dir, "cache")
	warm := newFakeExec(func(string) behaviour { return noop })
	if _, err := Run(b.Context(), RunOptions{SpecPath: spec, Out: filepath.Join(dir, "warm"), CacheDir: cache, Executor: warm, Concurrency: 2}); err != nil {
		b.Fatal(err)
	}
	peak := startPeakSampler(b.Context())
	var cpu, wall time.Duration
	runs := 0
	for b.Loop() {
		out := filepath.Join(dir, fmt.Sprintf("out-%d", runs))
		start, cpu0 := time.Now(), treeCPU()
		sum, err := Run(b.Context(), RunOptions{SpecPath: spec, Out: out, CacheDir: cache,
			Executor: &PipelineExecutor{Replay: cassette}, Concurrency: 2})
		wall += time.Since(start)
		cpu += treeCPU() - cpu0
		if err != nil || sum.Counts[StatusSuccess] != n {
			b.Fatalf("%d repositories: %v, counts %v", n, err, sum.Counts)
		}
		runs++
	}
	perRepo := float64(runs * n)
	b.ReportMetric(float64(cpu.Milliseconds())/perRepo, "cpu-ms/repo")
	b.ReportMetric(float64(wall.Milliseconds())/perRepo, "wall-ms/repo")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MB")
	}
}

// treeCPU is the user and system CPU time of this process and of its
// children that were waited for.
func treeCPU() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

// scaleBatch writes n copies of one small git repository under dir/repos,
// the note task, its cassette and a batch spec over the copies; it
// returns the batch spec and cassette paths.
func scaleBatch(tb testing.TB, dir string, n int) (string, string) {
	tb.Helper()
	seed := filepath.Join(dir, "seed")
	gittest.Init(tb, seed, map[string]string{"README.md": "# app\n", "main.go": "package main\n"})
	var spec strings.Builder
	spec.WriteString("version: 1\nname: scale\ntask: task.yaml\nclone: {depth: 1}\nrepos:\n")
	for i := range n {
		name := fmt.Sprintf("r%04d", i)
		if err := os.CopyFS(filepath.Join(dir, "repos", name), os.DirFS(seed)); err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - path: repos/%s\n    inputs: {who: %s}\n", name, name)
	}
	write(tb, filepath.Join(dir, "task.yaml"), noteTask)
	cassette := filepath.Join(dir, "session.jsonl")
	noteCassette(tb, cassette)
	path := filepath.Join(dir, "batch.yaml")
	write(tb, path, spec.String())
	return path, cassette
}
