package pipeline

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader on
// different goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestExecSaysItWaitsForTheTree: a run in place on a work tree another
// run holds (its snapshot store locked) says on stderr that it waits for
// that run, naming the holder, and goes on once it ends.
func TestExecSaysItWaitsForTheTree(t *testing.T) {
	spec, repo := execFixture(t)
	held, err := snapshot.Open(t.Context(), snapshot.Options{WorkTree: repo})
	if err != nil {
		t.Fatal(err)
	}
	srv := newModel(t, llmtest.Turn{Text: "Done."}.Reply())
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(t.TempDir(), "o"), BaseURL: srv.URL(),
			APIKey: testKey, Stdout: &bytes.Buffer{}, Stderr: &stderr})
		done <- err
	}()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(stderr.String(), "runner: waiting for another run on ") {
		select {
		case err := <-done:
			t.Fatalf("the run ended (%v) while the tree was held, without saying it waits:\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no waiting note within a minute:\n%s", stderr.String())
		}
	}
	// Said before the run's header: run.started follows the base snapshot.
	if got := stderr.String(); !strings.Contains(got, "(pid ") || strings.Contains(got, "· model") {
		t.Errorf("the note does not name the holder, or the run started while the tree was held:\n%s", got)
	}
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the run after the other ended: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(stderr.String(), "waiting for another run"); n != 1 {
		t.Errorf("the note is said %d times, want once:\n%s", n, stderr.String())
	}
}
