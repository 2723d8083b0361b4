package e2e

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// runnerBin is the runner binary built once for all tests.
var runnerBin string //nolint:gochecknoglobals // set once in TestMain

// repoRoot is the root of this repository.
var repoRoot string //nolint:gochecknoglobals // set once in TestMain

func TestMain(m *testing.M) {
	if os.Getenv(rssHelperEnv) != "" {
		os.Exit(rssHelper())
	}
	flag.Parse()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "runner-e2e-bin-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	root, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	repoRoot = root
	runnerBin = filepath.Join(dir, "runner")
	build := exec.CommandContext(context.Background(), "go", "build", "-o", runnerBin, "./cmd/runner")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build runner: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// result is how one runner process ended.
type result struct {
	code           int
	stdout, stderr string
}

// baseEnv is a minimal environment for the runner and the go commands it
// runs: the toolchain and its caches from this process, no network for
// modules, and a private cache dir for snapshot stores.
func baseEnv(t *testing.T) []string {
	t.Helper()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"XDG_CACHE_HOME=" + t.TempDir(),
		"GOCACHE=" + goEnv(t, "GOCACHE"),
		"GOMODCACHE=" + goEnv(t, "GOMODCACHE"),
		"GOPATH=" + goEnv(t, "GOPATH"),
		"GOPROXY=off",
		"GOTOOLCHAIN=local",
		"GOFLAGS=",
		"NO_COLOR=1",
	}
	return env
}

// goEnv is one `go env` value.
func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

// runRunner runs the runner binary in dir with env and waits for it.
func runRunner(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), runnerBin, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("run runner: %v", err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// readEvents reads an event log, checks every line against the schema and
// the envelope's order (seq 1, 2, …, one run id) and that run.finished is
// the last line, and returns the records.
func readEvents(t *testing.T, path string) []event.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := event.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.ValidateLog(data); err != nil {
		t.Fatalf("events do not match the schema: %v", err)
	}
	recs, err := event.ReadLog(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 2 {
		t.Fatalf("got %d events, want at least run.started and run.finished", len(recs))
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) || r.RunID != recs[0].RunID {
			t.Fatalf("event %d: seq %d run %s, want seq %d run %s", i+1, r.Seq, r.RunID, i+1, recs[0].RunID)
		}
		if r.Type == "run.finished" && i != len(recs)-1 {
			t.Fatalf("run.finished is event %d of %d, want the last", i+1, len(recs))
		}
	}
	if recs[0].Type != "run.started" || recs[len(recs)-1].Type != "run.finished" {
		t.Fatalf("log runs from %s to %s, want run.started to run.finished", recs[0].Type, recs[len(recs)-1].Type)
	}
	return recs
}

// ofType returns the payloads of the records of one type.
func ofType[T event.Payload](t *testing.T, recs []event.Record) []T {
	t.Helper()
	var zero T
	var out []T
	for _, r := range recs {
		if r.Type != zero.EventType() {
			continue
		}
		var p T
		if err := r.Decode(&p); err != nil {
			t.Fatalf("decode %s: %v", r.Type, err)
		}
		out = append(out, p)
	}
	return out
}

// finished is the run.finished payload of a log.
func finished(t *testing.T, recs []event.Record) event.RunFinished {
	t.Helper()
	fin := ofType[event.RunFinished](t, recs)
	if len(fin) != 1 {
		t.Fatalf("got %d run.finished events, want 1", len(fin))
	}
	return fin[0]
}

// requireFiles fails unless dir holds every named file.
func requireFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("out dir: %v", err)
		}
	}
}

// newModel starts the fake model server with scripted replies. llmtest
// sets its replies after the server started listening; taking the server's
// lock once here (Requests) orders that write before every request the
// runner process makes, as the race detector sees it.
func newModel(t *testing.T, replies ...llmtest.Reply) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(t, replies...)
	_ = srv.Requests()
	return srv
}
