package snapshot

import (
	"context"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFinalSnapshot compares the two ways of recording the work tree
// at the end of a run, after a command appended a line to one file of the
// 25,000-file tree: a full stat walk (Track, the final snapshot until
// December 2026) and what the watch reported (TrackChanged). Each
// iteration runs both, in alternating order, so both see the same load:
//
//	go test -run '^$' -bench FinalSnapshot -benchtime 10x ./runner/snapshot/
//
// full-ms and watch-ms are median wall times, full-cpu-ms and
// watch-cpu-ms median process CPU (user+system).
func BenchmarkFinalSnapshot(b *testing.B) {
	wt := b.TempDir()
	generateTree(b, wt, 25000)
	git(b, wt, nil, "init", "-q", "-b", "main")
	git(b, wt, nil, "add", "-A")
	git(b, wt, nil, "commit", "-q", "-m", "base")
	rel := "d12/s10/f12262.txt"
	s, err := Open(context.Background(), Options{WorkTree: wt, StoreDir: filepath.Join(b.TempDir(), "store"), Watch: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Track(context.Background()); err != nil {
		b.Fatal(err)
	}
	var full, watch, fullCPU, watchCPU []float64
	measure := func(i int, track func() error, wall, cpu *[]float64) {
		appendLine(b, filepath.Join(wt, rel), i)
		c0, t0 := processCPU(), time.Now()
		if err := track(); err != nil {
			b.Fatal(err)
		}
		*wall = append(*wall, float64(time.Since(t0).Microseconds())/1e3)
		*cpu = append(*cpu, float64(processCPU()-c0)/1e6)
	}
	trackFull := func() error { _, err := s.Track(context.Background()); return err }
	trackWatch := func() error {
		_, how, err := s.TrackChanged(context.Background(), nil)
		if err == nil && how.Method != "watch" {
			b.Fatalf("TrackChanged walked in full: %s", how)
		}
		return err
	}
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			measure(2*i, trackFull, &full, &fullCPU)
			measure(2*i+1, trackWatch, &watch, &watchCPU)
		} else {
			measure(2*i, trackWatch, &watch, &watchCPU)
			measure(2*i+1, trackFull, &full, &fullCPU)
		}
	}
	b.ReportMetric(median(full), "full-ms")
	b.ReportMetric(median(watch), "watch-ms")
	b.ReportMetric(median(fullCPU), "full-cpu-ms")
	b.ReportMetric(median(watchCPU), "watch-cpu-ms")
}

// processCPU is this process's user+system CPU in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}
