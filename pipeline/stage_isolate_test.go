package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/tempdir"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestIsolateCopyEndingsAreRecorded: with --isolate, a file vanishing
// during the copy and a cancel during it both end in a complete out dir
// (run.started, run.finished with the error naming the file or the
// cancel, result.json, summary.md), exit 3 and 130, and leave no
// temporary directory; the user's work tree is untouched.
func TestIsolateCopyEndingsAreRecorded(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	spec, repo := execFixture(t)
	mustWrite(t, filepath.Join(repo, "pkg", "a.go"), "package pkg\n")
	mustWrite(t, filepath.Join(repo, "pkg", "b.go"), "package pkg\n")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	tests := map[string]struct {
		ctx    context.Context
		hook   func(rel string)
		code   int
		status event.Status
		msg    string
	}{
		"vanished": {ctx: t.Context(), code: ExitInfra, status: event.StatusError, msg: "pkg/b.go vanished during the copy",
			hook: func(rel string) {
				if rel == "pkg/b.go" {
					_ = os.Rename(filepath.Join(repo, "pkg", "b.go"), filepath.Join(repo, "b.go.moved"))
				}
			}},
		"cancelled": {ctx: ctx, code: ExitCancelled, status: event.StatusCancelled, msg: "cancelled",
			hook: func(rel string) {
				if rel == "pkg/a.go" {
					cancel()
				}
			}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := newModel(t, llmtest.Turn{Text: "never asked"}.Reply())
			out := filepath.Join(t.TempDir(), "out")
			res, err := Exec(tt.ctx, ExecOptions{Task: spec, Repo: repo, Out: out, Isolate: true, BaseURL: srv.URL(),
				APIKey: testKey, Quiet: true, copyHook: tt.hook})
			if ExitCode(err) != tt.code || !res.Reported || res.Status != tt.status || res.Error == nil ||
				!strings.Contains(res.Error.Message, tt.msg) {
				t.Fatalf("exit %d, %+v (%v), want %d %s %q", ExitCode(err), res, err, tt.code, tt.status, tt.msg)
			}
			data, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			recs := validLog(t, data)
			if recs[0].Type != "run.started" || len(recs) != 2 {
				t.Errorf("log has %d events, want run.started and run.finished:\n%s", len(recs), data)
			}
			var result event.RunFinished
			if data, err := os.ReadFile(filepath.Join(out, "result.json")); err != nil || json.Unmarshal(data, &result) != nil ||
				result.Status != tt.status || result.ExitCode != tt.code {
				t.Errorf("result.json (%v): %s", err, data)
			}
			if md, err := os.ReadFile(filepath.Join(out, "summary.md")); err != nil || !strings.Contains(string(md), string(tt.status)) {
				t.Errorf("summary.md (%v):\n%s", err, md)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "runner-*")); len(left) != 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
			if len(srv.Requests()) != 0 {
				t.Errorf("the model was called")
			}
		})
	}
	if _, err := os.Stat(filepath.Join(repo, "pkg", "a.go")); err != nil {
		t.Errorf("the work tree changed: %v", err)
	}
}

// TestRunTempRemovedOnEveryPath: a successful --isolate run, one whose
// agent stage panics, and one after a killed run's leftovers all end with
// nothing of theirs in TMPDIR, and the killed run's directory (its lock
// free) is collected while a live one (locked) is kept.
func TestRunTempRemovedOnEveryPath(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	spec, repo := execFixture(t)

	// A live run's directory (locked by this process) and a killed one's
	// (a lock file nobody holds, as a SIGKILL leaves it).
	live, err := tempdir.New(tmp, runTempPattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Remove() })
	dead := filepath.Join(tmp, "runner-run-killed")
	mustWrite(t, filepath.Join(dead, tempdir.LockFile), "")
	mustWrite(t, filepath.Join(dead, "repo", "big.bin"), "copy of a killed run")

	srv := newModel(t, writeTurn(), llmtest.Turn{Text: "Wrote hello.txt."}.Reply())
	out := filepath.Join(t.TempDir(), "out")
	res, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, Isolate: true, BaseURL: srv.URL(),
		APIKey: testKey, Quiet: true})
	if err != nil || res.Status != event.StatusSuccess || len(res.Files) != 1 {
		t.Fatalf("isolated run: %+v (%v)", res, err)
	}
	if _, err := os.Stat(filepath.Join(repo, "hello.txt")); !os.IsNotExist(err) {
		t.Errorf("--isolate wrote into the work tree (%v)", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "runner-*")); len(left) != 1 || left[0] != live.Path() {
		t.Errorf("left in TMPDIR: %v, want only the live run's %s", left, live.Path())
	}

	// A stage that panics: the run ends in run.finished (error, exit 3)
	// and its temporary directory is gone all the same.
	panicky := newModel(t, writeTurn(), llmtest.Turn{Text: "done"}.Reply())
	res, err = Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(t.TempDir(), "o2"), Isolate: true,
		BaseURL: panicky.URL(), APIKey: testKey, Quiet: true, copyHook: func(rel string) {
			if rel == "README" {
				panic("boom in the copy")
			}
		}})
	if ExitCode(err) != ExitInfra || !res.Reported || res.Error == nil || !strings.Contains(res.Error.Message, "panic: boom in the copy") {
		t.Fatalf("panicking stage: exit %d, %+v (%v)", ExitCode(err), res, err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "runner-*")); len(left) != 1 {
		t.Errorf("left in TMPDIR after a panic: %v", left)
	}
}
