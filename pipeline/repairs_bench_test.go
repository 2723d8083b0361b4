package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/safefs"
	"github.com/seed43ef5acb/runner/pipeline/gate"
	"github.com/seed43ef5acb/runner/pipeline/ownfiles"
)

// BenchmarkRepairs measures the repairs after a run on the 25,000-file
// git work tree (25,000 loose objects for the tripwire to stamp) with
// 1,000 files of an earlier run under .runner and 200 in this run's out
// dir: arming the .git and .runner tripwires, then their restores, the
// mode restore and fixTree, with nothing changed. Each iteration runs
// them twice, in alternating order: through internal/safefs, and with
// safefs.SetFollowLinks, the plain os calls that follow symlinks as the
// repairs made them before (the baseline, interleaved so that a busy
// machine weighs on both alike). It reports the medians, ms/op of each,
// and safefs/follow, their ratio. Run:
//
//	go test ./pipeline -run '^$' -bench Repairs -benchtime 15x -v
func BenchmarkRepairs(b *testing.B) {
	repo := filepath.Join(b.TempDir(), "repo")
	genStepTree(b, repo, 25000)
	for i := range 1000 {
		mustWriteB(b, filepath.Join(repo, ".runner", "runs", "old", "tool-output", fmt.Sprintf("out-%04d.txt", i)), "output\n")
	}
	out := filepath.Join(repo, ".runner", "runs", "cur")
	for i := range 200 {
		mustWriteB(b, filepath.Join(out, "tool-output", fmt.Sprintf("out-%04d.txt", i)), "output\n")
	}
	repairs := func(follow bool) time.Duration {
		safefs.SetFollowLinks(follow)
		defer safefs.SetFollowLinks(false)
		start := time.Now()
		r := &execRun{}
		r.workTree, r.repo, r.outDir, r.modes = repo, repo, out, ownfiles.NewModes()
		r.modes.Guard(out)
		if err := r.armTripwire(b.Context()); err != nil {
			b.Fatal(err)
		}
		if g, failed := (gate.GitTripwire{Tripwire: r.tripwire}).Check(); failed {
			b.Fatalf("tripwire: %v", g.Paths)
		}
		if changed, lost := r.stateTripwire.Restore(); len(changed)+len(lost) > 0 {
			b.Fatalf("state: %v %v", changed, lost)
		}
		r.modes.Restore()
		r.modes.FixTree(out)
		return time.Since(start)
	}
	var safe, follow []time.Duration
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			safe, follow = append(safe, repairs(false)), append(follow, repairs(true))
		} else {
			follow, safe = append(follow, repairs(true)), append(safe, repairs(false))
		}
		i++
	}
	ms := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / 1e6
	}
	s, f := ms(safe), ms(follow)
	b.ReportMetric(s, "safefs-ms/op")
	b.ReportMetric(f, "follow-ms/op")
	b.ReportMetric(s/f, "safefs/follow")
	b.Logf("safefs %v, follow %v", safe, follow)
}

func mustWriteB(b *testing.B, path, content string) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}
