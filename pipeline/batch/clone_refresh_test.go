package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
)

// readmeSpy records the README.md of every work tree it is given, then
// lets next run.
type readmeSpy struct {
	next Executor
	mu   sync.Mutex
	seen []string
}

func (s *readmeSpy) Exec(ctx context.Context, job Job) (Outcome, error) {
	data, _ := os.ReadFile(filepath.Join(job.WorkDir, "README.md"))
	s.mu.Lock()
	s.seen = append(s.seen, string(data))
	s.mu.Unlock()
	return s.next.Exec(ctx, job)
}

// commitTo appends line to src's README.md and commits it on the current
// branch; it returns the new HEAD.
func commitTo(t *testing.T, src, line string) string {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(src, "README.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, src, "commit", "-q", "-am", line)
	return gittest.Run(t, src, "rev-parse", "HEAD")
}

// TestRunRefreshesCachedClone: a batch that finds its repository in the
// clone cache (a shared --cache-dir on a new night, the default cache on
// --redo) runs on the repository's current commit, not the one cloned
// first: for the default branch and a named branch, shallow and full.
func TestRunRefreshesCachedClone(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, ref string
		depth     int
	}{
		{"default branch shallow", "", 1},
		{"default branch full", "", 0},
		{"branch shallow", "feature", 1},
		{"branch full", "feature", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := filepath.Join(dir, "r")
			gittest.Init(t, src, map[string]string{"README.md": "# r\n", "main.go": "package main\n"})
			entry := "  - path: r\n    inputs: {name: r}\n"
			if tt.ref != "" {
				gittest.Run(t, src, "checkout", "-q", "-b", tt.ref)
				entry += "    ref: " + tt.ref + "\n"
			}
			write(t, filepath.Join(dir, "task.yaml"), "version: 1\nname: t\nprompt: hi\ninputs: {name: {}}\n")
			spec := filepath.Join(dir, "batch.yaml")
			write(t, spec, fmt.Sprintf("version: 1\nname: n\ntask: task.yaml\nclone: {depth: %d}\nretries: 0\nrepos:\n%s", tt.depth, entry))
			cache := filepath.Join(dir, "cache")
			run := func(out string, redo bool, cacheDir string) (string, string) {
				t.Helper()
				spy := &readmeSpy{next: newFakeExec(func(string) behaviour { return noop })}
				sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: filepath.Join(dir, out), Executor: spy,
					Redo: redo, CacheDir: cacheDir, RetryBackoff: time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				if len(sum.Results) != 1 || len(spy.seen) != 1 {
					t.Fatalf("%s: results %+v, work trees %q", out, sum.Results, spy.seen)
				}
				return sum.Results[0].Commit, spy.seen[0]
			}
			first := gittest.Run(t, src, "rev-parse", "HEAD")
			if got, _ := run("night1", false, cache); got != first {
				t.Fatalf("night 1 ran on %s, want %s", got, first)
			}
			second := commitTo(t, src, "night 2")
			got, readme := run("night2", false, cache) // a new out dir, the shared cache
			if got != second || !strings.Contains(readme, "night 2") {
				t.Errorf("night 2 ran on %s (README %q), want %s: the cached clone was not refreshed", got, readme, second)
			}
			third := commitTo(t, src, "redo")
			if got, readme := run("night2", true, cache); got != third || !strings.Contains(readme, "redo") {
				t.Errorf("--redo ran on %s (README %q), want %s", got, readme, third)
			}
			// The default cache (out/.cache) on --redo.
			run("own", false, "")
			fourth := commitTo(t, src, "own cache")
			if got, readme := run("own", true, ""); got != fourth || !strings.Contains(readme, "own cache") {
				t.Errorf("--redo with the default cache ran on %s (README %q), want %s", got, readme, fourth)
			}
		})
	}
}

// TestRunRefreshFailureIsInfra: when the cached clone cannot be refreshed
// (here the remote refuses the credentials), the repository is not run on
// the stale commit: it ends infra_failed, and the error says what the cache
// holds and that it was not used.
func TestRunRefreshFailureIsInfra(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url, _ := privateGitServer(t, filepath.Join(dir, "remote"), "# private\n")
	server := strings.TrimSuffix(url, "/private")
	write(t, filepath.Join(dir, "task.yaml"), "version: 1\nname: t\nprompt: hi\ninputs: {name: {}}\n")
	spec := filepath.Join(dir, "batch.yaml")
	write(t, spec, "version: 1\nname: p\ntask: task.yaml\nretries: 1\nrepos:\n  - url: "+url+"\n    inputs: {name: private}\n")
	cache := filepath.Join(dir, "cache")
	run := func(out, token string) (RepoResult, *fakeExec) {
		t.Helper()
		fe := newFakeExec(func(string) behaviour { return noop })
		sum, err := Run(t.Context(), RunOptions{SpecPath: spec, Out: filepath.Join(dir, out), Executor: fe, CacheDir: cache,
			GitHubToken: token, GitHubServerURL: server, RetryBackoff: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Results) != 1 {
			t.Fatalf("results %+v", sum.Results)
		}
		return sum.Results[0], fe
	}
	first, _ := run("n1", "tok")
	if first.Status != StatusNoChange {
		t.Fatalf("night 1: %+v", first)
	}
	second := commitTo(t, filepath.Join(dir, "remote", "private"), "night 2")
	res, fe := run("n2", "wrong")
	calls, _, _ := fe.counts()
	if res.Status != StatusInfraFailed || len(calls) != 0 {
		t.Fatalf("refresh refused: status %s, executor calls %v; want infra_failed and no run", res.Status, calls)
	}
	for _, want := range []string{"refresh", url, shortHash(first.Commit), "not used"} {
		if !strings.Contains(res.Error, want) {
			t.Errorf("error %q does not say %q", res.Error, want)
		}
	}
	if res.Attempts != 2 {
		t.Errorf("attempts = %d, want 2 (a refresh failure is retried like a clone failure)", res.Attempts)
	}
	// With the right token again, the refresh goes through (the token is
	// sent to fetches too).
	if res, _ := run("n3", "tok"); res.Commit != second {
		t.Errorf("night 3 ran on %s, want %s", res.Commit, second)
	}
}

// TestClonerConcurrentRefresh: two cloners sharing one cache (as two
// shards or two batches do, each with its own memory) refresh the same
// entry at once, while work trees are copied from it: both get the new
// commit and clean work trees.
func TestClonerConcurrentRefresh(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	gittest.Init(t, src, map[string]string{"README.md": "# s\n"})
	cache := filepath.Join(dir, "cache")
	if _, err := (&cloner{dir: cache, depth: 1}).workTree(t.Context(), Repo{ID: "s"}, src, filepath.Join(dir, "w0")); err != nil {
		t.Fatal(err)
	}
	head := commitTo(t, src, "next")
	var wg sync.WaitGroup
	const n = 6
	commits, errs := make([]string, n), make([]error, n)
	clones := []*cloner{{dir: cache, depth: 1}, {dir: cache, depth: 1}}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			commits[i], errs[i] = clones[i%2].workTree(t.Context(), Repo{ID: "s"}, src, filepath.Join(dir, fmt.Sprintf("w%d", i+1)))
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || commits[i] != head {
			t.Errorf("worker %d: %s %v, want %s", i, commits[i], errs[i], head)
			continue
		}
		w := filepath.Join(dir, fmt.Sprintf("w%d", i+1))
		if st := gittest.Run(t, w, "status", "--porcelain"); st != "" {
			t.Errorf("worker %d: work tree not clean:\n%s", i, st)
		}
		if got := gittest.Run(t, w, "rev-parse", "HEAD"); got != head {
			t.Errorf("worker %d: HEAD %s, want %s", i, got, head)
		}
	}
}
