package batchreport

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/pipeline/batch"
	"github.com/seed43ef5acb/runner/runner/event"
)

// genBatch describes a synthetic batch out dir, as `runner batch run`
// leaves it: manifest.json, results.jsonl and per-repository dirs with
// result.json (tokens), changes.patch, summary.md and events.jsonl.
type genBatch struct {
	Name   string
	Repos  int
	Seed   uint64
	Shards int       // >1: write shard dirs shard-0 … shard-(N-1) under the dir
	Start  time.Time // first finish; repositories finish a minute apart
	// Reruns appends an earlier (worse) line before some results, as a
	// resumed or --only-failed run leaves them.
	Reruns bool
	Drop   []int // indices of repositories left without a result (a shard cut short)
}

var genStatuses = []batch.Status{
	batch.StatusSuccess, batch.StatusSuccess, batch.StatusSuccess, batch.StatusSuccess, batch.StatusSuccess,
	batch.StatusNoChange, batch.StatusNoChange, batch.StatusTaskFailed, batch.StatusTaskFailed,
	batch.StatusInfraFailed, batch.StatusTimeout, batch.StatusBudgetExceeded,
}

// write lays the batch out under dir and returns the out dirs written
// (dir itself, or its shard dirs).
func (g genBatch) write(t testing.TB, dir string) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(g.Seed, 42))
	if g.Start.IsZero() {
		g.Start = time.Date(2026, 11, 30, 3, 17, 0, 0, time.UTC)
	}
	m := batch.Manifest{Version: 1, Name: g.Name}
	for i := range g.Repos {
		m.Repos = append(m.Repos, batch.Repo{ID: fmt.Sprintf("github.com-org-svc-%04d", i), URL: fmt.Sprintf("https://github.com/org/svc-%04d", i)})
	}
	dirs := []string{dir}
	if g.Shards > 1 {
		dirs = nil
		for s := range g.Shards {
			dirs = append(dirs, filepath.Join(dir, fmt.Sprintf("shard-%d", s)))
		}
	}
	lines := make([]strings.Builder, len(dirs))
	for _, d := range dirs {
		writeJSONFile(t, filepath.Join(d, batch.ManifestFile), m)
	}
	for i, repo := range m.Repos {
		d, shard := 0, ""
		if g.Shards > 1 {
			d, shard = i%g.Shards, fmt.Sprintf("%d/%d", i%g.Shards, g.Shards)
		}
		r := g.result(rng, i, repo, shard)
		if slices.Contains(g.Drop, i) {
			continue
		}
		if g.Reruns && i%7 == 3 {
			early := r
			early.Status, early.Error, early.ErrorClass, early.FinishedAt = batch.StatusInfraFailed, "clone: connection reset", event.ClassInfra, r.FinishedAt.Add(-time.Hour)
			appendLine(t, &lines[d], early)
		}
		appendLine(t, &lines[d], r)
		g.repoDir(t, rng, dirs[d], r)
	}
	for i, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, batch.ResultsFile), []byte(lines[i].String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

func (g genBatch) result(rng *rand.Rand, i int, repo batch.Repo, shard string) batch.RepoResult {
	st := genStatuses[rng.IntN(len(genStatuses))]
	r := batch.RepoResult{
		Repo: repo.URL, ID: repo.ID, Status: st, Steps: 1 + rng.IntN(30), Attempts: 1,
		CostUSD:    costOf(float64(rng.IntN(250000)) / 1e6),
		DurationMS: int64(5000 + rng.IntN(900000)), Commit: fmt.Sprintf("%040x", rng.Uint64()), Shard: shard,
		FinishedAt: g.Start.Add(time.Duration(i) * time.Minute),
	}
	switch st {
	case batch.StatusSuccess:
		r.FilesChanged, r.PatchPath = 1+rng.IntN(6), repo.ID+"/changes.patch"
		if i%5 == 0 {
			r.PRURL = fmt.Sprintf("https://github.com/org/svc-%04d/pull/%d", i, 1+i%40)
		}
		if i%23 == 0 {
			r.PublishError = "create pull request: 422 A pull request already exists"
		}
	case batch.StatusTaskFailed:
		r.FilesChanged, r.PatchPath = 1+rng.IntN(3), repo.ID+"/changes.patch"
		r.Error = []string{"check tests failed after 2 retries", "the model gave up: cannot find the config", "max steps reached"}[rng.IntN(3)]
		if i%4 == 0 {
			r.ErrorClass = event.ClassContextOverflow
		}
	case batch.StatusInfraFailed:
		r.Error, r.ErrorClass, r.Attempts = "provider: 503 Service Unavailable after 3 attempts", []event.ErrorClass{event.ClassFatal, event.ClassInfra, event.ClassRetryable}[rng.IntN(3)], 3
	case batch.StatusTimeout:
		r.Error = "the per-repository timeout of 20m elapsed"
	case batch.StatusBudgetExceeded:
		r.Error = "max_cost_usd 0.25 reached"
	}
	return r
}

// repoDir writes out/<id>/: result.json, summary.md, events.jsonl and,
// with a patch, changes.patch with a few hunks.
func (g genBatch) repoDir(t testing.TB, rng *rand.Rand, dir string, r batch.RepoResult) {
	t.Helper()
	rd := filepath.Join(dir, r.ID)
	fin := map[string]any{
		"v": 1, "seq": r.Steps * 3, "time": r.FinishedAt, "run_id": "run-" + r.ID, "type": "run.finished",
		"status": "success", "steps": r.Steps, "cost_usd": r.CostUSD, "duration_ms": r.DurationMS,
		"files_changed": r.FilesChanged,
		"tokens":        map[string]int{"input": 1000 + rng.IntN(90000), "output": 100 + rng.IntN(9000)},
	}
	writeJSONFile(t, filepath.Join(rd, "result.json"), fin)
	writeFile(t, filepath.Join(rd, "summary.md"), "## "+r.ID+"\n\nstatus "+string(r.Status)+"\n")
	writeFile(t, filepath.Join(rd, "events.jsonl"), `{"v":1,"seq":1,"type":"run.started"}`+"\n")
	if r.PatchPath == "" {
		return
	}
	var p strings.Builder
	for f := range r.FilesChanged {
		adds, dels := rng.IntN(40), rng.IntN(20)
		fmt.Fprintf(&p, "diff --git a/f%d.go b/f%d.go\n--- a/f%d.go\n+++ b/f%d.go\n@@ -1,%d +1,%d @@\n", f, f, f, f, dels+1, adds+1)
		p.WriteString(" package x\n")
		for range dels {
			p.WriteString("-old line\n")
		}
		for range adds {
			p.WriteString("+new line\n")
		}
	}
	writeFile(t, filepath.Join(dir, r.PatchPath), p.String())
}

func appendLine(t testing.TB, b *strings.Builder, r batch.RepoResult) {
	t.Helper()
	line, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	b.Write(line)
	b.WriteByte('\n')
}

func writeJSONFile(t testing.TB, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(data)+"\n")
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func costOf(v float64) *float64 { return &v }
