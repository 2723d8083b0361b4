package pipeline

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/historyfile"
	"github.com/seed43ef5acb/runner/runner/outdir"
	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// fullTree is the tree a full walk of dir records in a fresh store.
func fullTree(t *testing.T, dir string) string {
	t.Helper()
	s, err := snapshot.Open(t.Context(), snapshot.Options{WorkTree: dir, StoreDir: t.TempDir(), Exclude: []string{".runner"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tree, err := s.Track(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return string(tree)
}

// waitRequests waits until srv has received n requests; false after d.
func waitRequests(srv *llmtest.Server, n int, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if len(srv.Requests()) >= n {
			return true
		}
	}
	return false
}

// TestBaseSnapshotOverlapsTheSession: the base snapshot is held until the
// model has had two requests (the read tool ran meanwhile), and a bash
// command that edits the tree is called right then. The command waits for
// the base: run.started is the log's first record and names the tree as
// it was before the run, the history's header too, the held events follow
// in order, and the final patch holds the edit.
func TestBaseSnapshotOverlapsTheSession(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	spec := filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, spec, stepBenchSpec)
	repo := filepath.Join(t.TempDir(), "repo")
	mustWrite(t, filepath.Join(repo, "notes.txt"), "one\n")
	mustWrite(t, filepath.Join(repo, "sub", "keep.txt"), "k\n")
	before := fullTree(t, repo)
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("read", `{"path":"notes.txt"}`)}}.Reply(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"echo two >> notes.txt"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply())
	overlapped := make(chan bool, 1)
	out := t.TempDir()
	var stderr bytes.Buffer
	res, err := Exec(t.Context(), ExecOptions{
		Task: spec, Repo: repo, Out: out, Quiet: true,
		BaseURL: srv.URL(), APIKey: "sk-unit-0123456789abcdef", Stdout: io.Discard, Stderr: &stderr,
		baseHook: func() { overlapped <- waitRequests(srv, 2, 20*time.Second) },
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Exec: exit %d, %v\n%s", res.ExitCode, err, stderr.String())
	}
	if !<-overlapped {
		t.Fatal("the model had no second request while the base snapshot was held: the session waited for it")
	}
	data, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs := validLog(t, data)
	var types []string
	for _, r := range recs {
		types = append(types, r.Type)
	}
	var started event.RunStarted
	if err := recs[0].Decode(&started); err != nil || recs[0].Type != "run.started" {
		t.Fatalf("first record %s (%v), want run.started", recs[0].Type, err)
	}
	if started.BaseTree != before {
		t.Errorf("run.started base_tree %s, want the tree before the run %s", started.BaseTree, before)
	}
	want := []string{"run.started", "step.started", "tool.started", "tool.completed", "step.finished",
		"step.started", "tool.started", "tool.completed", "step.finished", "patch"}
	if len(types) < len(want) || !equalStrings(types[:len(want)], want) {
		t.Errorf("records %v, want them to begin %v", types, want)
	}
	if types[len(types)-1] != "run.finished" {
		t.Errorf("last record %s, want run.finished", types[len(types)-1])
	}
	var final event.Patch
	for _, r := range recs {
		if r.Type == "patch" {
			if err := r.Decode(&final); err != nil {
				t.Fatal(err)
			}
		}
	}
	if final.Step != nil || len(final.Files) != 1 || final.Files[0].Path != "notes.txt" || final.Tree != fullTree(t, repo) {
		t.Errorf("final patch %+v, want notes.txt changed and the tree a full walk records", final)
	}
	h, err := historyfile.Read(filepath.Join(out, outdir.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	if h.Header.BaseTree != before || len(h.Transcript.Messages) < 5 || h.LastTree != final.Tree || !h.Final {
		t.Errorf("history: base %s, %d messages, last tree %s, final %v; want base %s, the whole session, the final tree",
			h.Header.BaseTree, len(h.Transcript.Messages), h.LastTree, h.Final, before)
	}
}

// TestCancelDuringBaseSnapshot: a cancel that comes while the base
// snapshot is held (the model already has its first request) ends the
// run as cancelled, with no base tree and an empty patch; the log still
// begins with run.started, holds the session's events and ends with
// run.finished.
func TestCancelDuringBaseSnapshot(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	repo := filepath.Join(t.TempDir(), "repo")
	mustWrite(t, filepath.Join(repo, "notes.txt"), "one\n")
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"echo two >> notes.txt"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cancelHeld := func() {
		if !waitRequests(srv, 1, 20*time.Second) {
			t.Error("no model request while the base snapshot was held")
		}
		cancel()
	}
	r := testRun{spec: stepBenchSpec, repo: repo, srv: srv, ctx: ctx, opts: func(o *ExecOptions) {
		o.Stdout = io.Discard
		o.baseHook = cancelHeld
	}}.exec(t)
	if r.err == nil || r.res.ExitCode != ExitCancelled {
		t.Fatalf("Exec: exit %d, %v, want %d\n%s", r.res.ExitCode, r.err, ExitCancelled, r.stderr)
	}
	recs, out := r.recs, r.out
	var started event.RunStarted
	if err := recs[0].Decode(&started); err != nil || recs[0].Type != "run.started" || started.BaseTree != "" {
		t.Errorf("first record %s base_tree %q (%v), want run.started with no base tree", recs[0].Type, started.BaseTree, err)
	}
	if recs[1].Type != "step.started" {
		t.Errorf("second record %s, want the held step.started", recs[1].Type)
	}
	var finished event.RunFinished
	last := recs[len(recs)-1]
	if err := last.Decode(&finished); err != nil || last.Type != "run.finished" || finished.Status != event.StatusCancelled {
		t.Errorf("last record %s status %s (%v), want run.finished cancelled", last.Type, finished.Status, err)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "notes.txt")); string(got) != "one\n" {
		t.Errorf("notes.txt %q: the command ran without a base tree", got)
	}
	if patch, err := os.ReadFile(filepath.Join(out, outdir.PatchFile)); err != nil || len(patch) != 0 {
		t.Errorf("patch %q (%v), want an empty file", patch, err)
	}
}

// TestBaseSnapshotFailsDuringSession: a base snapshot that fails while the
// model has its first request (its store is gone) is the run's error,
// exit 3; the command waiting for it never runs, and the log begins with run.started and ends with run.finished naming the failure.
func TestBaseSnapshotFailsDuringSession(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	repo := filepath.Join(t.TempDir(), "repo")
	mustWrite(t, filepath.Join(repo, "notes.txt"), "one\n")
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"echo two >> notes.txt"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply())
	breakStore := func() {
		if !waitRequests(srv, 1, 20*time.Second) {
			t.Error("no model request while the base snapshot was held")
		}
		if err := os.RemoveAll(cache); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(cache, []byte("not a directory\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
	r := testRun{spec: stepBenchSpec, repo: repo, srv: srv, opts: func(o *ExecOptions) { o.baseHook = breakStore }}.exec(t)
	if ExitCode(r.err) != ExitInfra || r.res.ExitCode != ExitInfra || !strings.Contains(r.err.Error(), "base snapshot") {
		t.Fatalf("Exec: exit %d, %v, want %d naming the base snapshot\n%s", r.res.ExitCode, r.err, ExitInfra, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "notes.txt")); string(got) != "one\n" {
		t.Errorf("notes.txt %q: the command ran without a base tree", got)
	}
	if r.recs[0].Type != "run.started" {
		t.Errorf("first record %s, want run.started", r.recs[0].Type)
	}
	var finished event.RunFinished
	last := r.recs[len(r.recs)-1]
	if err := last.Decode(&finished); err != nil || last.Type != "run.finished" || finished.Status != event.StatusError ||
		finished.Error == nil || finished.Error.Class != event.ClassInfra || !strings.Contains(finished.Error.Message, "base snapshot") {
		t.Errorf("last record %s %+v (%v), want run.finished error infra naming the base snapshot", last.Type, finished, err)
	}
}
