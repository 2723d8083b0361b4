package batch

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// fixture holds repositories r00, r01, … created once per test binary
// (on demand, since git is slow to start) and shared read-only by the
// tests through symlinks.
var fixture struct {
	mu  sync.Mutex
	dir string
	n   int
}

const fixtureRepos = 100

func TestMain(m *testing.M) {
	sandbox.Main() // the sandbox helper re-execs this binary
	code := m.Run()
	if fixture.dir != "" {
		os.RemoveAll(fixture.dir)
	}
	os.Exit(code)
}

// fixtureDir returns the fixture dir holding at least n repositories.
func fixtureDir(tb testing.TB, n int) string {
	tb.Helper()
	fixture.mu.Lock()
	defer fixture.mu.Unlock()
	if fixture.dir == "" {
		dir, err := os.MkdirTemp("", "batch-fixture-")
		if err != nil {
			tb.Fatal(err)
		}
		fixture.dir = dir
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := fixture.n; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			name := fmt.Sprintf("r%02d", i)
			gittest.Init(tb, filepath.Join(fixture.dir, name), map[string]string{
				"README.md": "# " + name + "\n", "main.go": "package main\n",
			})
		}()
	}
	wg.Wait()
	fixture.n = max(fixture.n, n)
	return fixture.dir
}

// sharedCache is a clone cache shared by the tests that run the fixture
// repositories (which also exercises concurrent use of one cache).
func sharedCache(tb testing.TB) string {
	tb.Helper()
	fixtureDir(tb, 0)
	return filepath.Join(fixture.dir, ".cache")
}

// makeBatch links dir/repos to the shared fixture repositories and writes
// a task spec and a batch spec over the first n of them (extra is appended
// to the batch spec); it returns the batch spec path.
func makeBatch(tb testing.TB, dir string, n int, extra string) string {
	tb.Helper()
	if n > fixtureRepos {
		tb.Fatalf("only %d fixture repositories", fixtureRepos)
	}
	if err := os.Symlink(fixtureDir(tb, n), filepath.Join(dir, "repos")); err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("version: 1\nname: demo\ntask: task.yaml\nclone: {depth: 1}\nrepos:\n")
	for i := range n {
		name := fmt.Sprintf("r%02d", i)
		fmt.Fprintf(&b, "  - path: repos/%s\n    inputs: {name: %s}\n", name, name)
	}
	b.WriteString(extra)
	write(tb, filepath.Join(dir, "task.yaml"), "version: 1\nname: t\nprompt: hi\ninputs:\n  name: {description: the repository}\n")
	path := filepath.Join(dir, "batch.yaml")
	write(tb, path, b.String())
	return path
}

func write(tb testing.TB, path, body string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// behaviour is what the fake executor does for one repository.
type behaviour string

const (
	edit        behaviour = "edit"        // change a file: success
	noop        behaviour = "noop"        // succeed without changes: no_change
	taskFail    behaviour = "fail"        // the task fails: task_failed
	flaky       behaviour = "flaky"       // infra error on attempt 1, then edit
	broken      behaviour = "broken"      // provider error every time: infra_failed
	slow        behaviour = "slow"        // waits for its context: timeout
	overBudget  behaviour = "over_budget" // budget_exceeded
	goErrAlways behaviour = "go_err"      // a Go error every time: infra_failed
)

// fakeExec is a scripted Executor that does a little real work: it
// checks the work tree is the repository's clone, edits it, hashes it and
// writes a patch into the out dir.
type fakeExec struct {
	script func(id string) behaviour
	cost   float64
	delay  time.Duration // models model latency per step
	steps  int           // scripted steps per run (≥1)
	onDone func(id string)
	// gate, when set, holds every call until gateN calls are in flight at
	// once (proving the pool reaches its concurrency), then is closed.
	gate  chan struct{}
	gateN int

	mu          sync.Mutex
	inflight    int
	maxInflight int
	calls       map[string]int // Exec calls by repo id
	finished    map[string]int // calls that returned an outcome (not cut off by cancellation)
}

func newFakeExec(script func(string) behaviour) *fakeExec {
	return &fakeExec{script: script, cost: 0.01, steps: 1, calls: map[string]int{}, finished: map[string]int{}}
}

func (f *fakeExec) Exec(ctx context.Context, job Job) (Outcome, error) {
	f.mu.Lock()
	f.inflight++
	f.maxInflight = max(f.maxInflight, f.inflight)
	f.calls[job.RepoID]++
	if f.gate != nil && f.inflight == f.gateN {
		close(f.gate)
		f.gate = nil
	}
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-time.After(60 * time.Second): // a hang guard: on a loaded machine starting them all can take long
			return Outcome{}, fmt.Errorf("gate: %d calls never ran at once", f.gateN)
		}
	}
	defer func() {
		f.mu.Lock()
		f.inflight--
		f.mu.Unlock()
	}()
	o, err := f.run(ctx, job)
	if ctx.Err() == nil || f.script(job.RepoID) == slow {
		f.mu.Lock()
		f.finished[job.RepoID]++
		f.mu.Unlock()
		if f.onDone != nil {
			f.onDone(job.RepoID)
		}
	}
	return o, err
}

func (f *fakeExec) run(ctx context.Context, job Job) (Outcome, error) {
	readme, err := os.ReadFile(filepath.Join(job.WorkDir, "README.md"))
	if err != nil {
		return Outcome{}, fmt.Errorf("work tree: %w", err)
	}
	if want := "# " + job.Inputs["name"]; !strings.HasPrefix(string(readme), want) {
		return Outcome{}, fmt.Errorf("work tree has %q, want %q", readme, want)
	}
	steps := max(f.steps, 1)
	h := sha256.New()
	for i := range steps {
		// A step that takes time (delay) can be cancelled; one that takes
		// none cannot. Without the delay a select would pick at random
		// between the timer and a context that is already done: in
		// TestRunEndToEnd the first jobs wait at the gate inside their
		// deadline (timeout 3s), and on a loaded machine that wait can
		// outlast it, so an edit then ended timeout or not by chance.
		if f.delay > 0 {
			select {
			case <-ctx.Done():
				return Outcome{Status: event.StatusCancelled}, ctx.Err()
			case <-time.After(f.delay):
			}
		}
		body := fmt.Sprintf("step %d of %s\n%s", i, job.RepoID, strings.Repeat("x", 512))
		if err := os.WriteFile(filepath.Join(job.WorkDir, fmt.Sprintf("step%d.txt", i)), []byte(body), 0o644); err != nil {
			return Outcome{}, err
		}
		h.Write([]byte(body))
	}
	o := Outcome{Status: "success", CostUSD: usd(f.cost), Steps: steps}
	switch f.script(job.RepoID) {
	case edit:
		return f.edit(job, o, h.Sum(nil))
	case noop:
		return o, nil
	case taskFail:
		o.Status, o.Error, o.ErrorClass = "failed", "checks failed: tests", "check"
		return o, nil
	case flaky:
		if job.Attempt == 1 {
			return Outcome{CostUSD: usd(f.cost)}, errors.New("connection reset")
		}
		return f.edit(job, o, h.Sum(nil))
	case broken:
		o.Status, o.Error, o.ErrorClass = "error", "503 from provider", event.ClassRetryable
		return o, nil
	case goErrAlways:
		return Outcome{}, errors.New("crashed")
	case slow:
		<-ctx.Done()
		return Outcome{Status: event.StatusCancelled, CostUSD: usd(f.cost)}, nil
	case overBudget:
		o.Status = "budget_exceeded"
		return o, nil
	}
	return o, fmt.Errorf("no script for %s", job.RepoID)
}

func (f *fakeExec) edit(job Job, o Outcome, sum []byte) (Outcome, error) {
	if err := os.WriteFile(filepath.Join(job.WorkDir, "main.go"), []byte("package main\n// edited\n"), 0o644); err != nil {
		return o, err
	}
	patch := fmt.Sprintf("--- a/main.go\n+++ b/main.go\n@@ -1 +1,2 @@\n package main\n+// edited %x\n", sum[:4])
	p := filepath.Join(job.OutDir, "changes.patch")
	if err := os.WriteFile(p, []byte(patch), 0o644); err != nil {
		return o, err
	}
	// The exec pipeline's own run.finished record, which the batch must keep.
	if err := os.WriteFile(filepath.Join(job.OutDir, "result.json"), []byte(`{"status":"success"}`), 0o644); err != nil {
		return o, err
	}
	o.FilesChanged, o.PatchPath = 1, p
	return o, nil
}

func (f *fakeExec) counts() (calls, finished map[string]int, maxInflight int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, d := map[string]int{}, map[string]int{}
	for k, v := range f.calls {
		c[k] = v
	}
	for k, v := range f.finished {
		d[k] = v
	}
	return c, d, f.maxInflight
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

func cmpFloat() cmp.Option {
	return cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })
}

// usd is a known cost.
func usd(v float64) *float64 { return &v }
