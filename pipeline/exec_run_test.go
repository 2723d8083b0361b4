package pipeline

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

const runSpec = `version: 1
name: unit
model: gpt-4.1-mini
prompt: Write hello.txt.
permissions:
  read: allow
  edit:
    "**": allow
limits:
  max_steps: 2
`

// execFixture is a spec and a work tree with one file.
func execFixture(t *testing.T) (spec, repo string) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the in-place snapshot store
	spec = filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, spec, runSpec)
	repo = filepath.Join(t.TempDir(), "repo")
	mustWrite(t, filepath.Join(repo, "README"), "unit\n")
	return spec, repo
}

func writeTurn() llmtest.Reply {
	return llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"hello.txt","content":"hello\n"}`)}}.Reply()
}

// validLog checks a log against the schema and returns its records.
func validLog(t *testing.T, data []byte) []event.Record {
	t.Helper()
	v, err := event.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.ValidateLog(data); err != nil {
		t.Fatalf("log does not match the schema: %v\n%s", err, data)
	}
	recs, err := event.ReadLog(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || recs[len(recs)-1].Type != "run.finished" {
		t.Fatalf("log does not end with run.finished:\n%s", data)
	}
	return recs
}

// TestExecEventsToStdoutIsolated: --events - puts the log on stdout (and
// no final message), --patch elsewhere, --isolate leaves the repo as it
// was; result.json and summary.md still land in the out dir.
func TestExecEventsToStdoutIsolated(t *testing.T) {
	spec, repo := execFixture(t)
	srv := newModel(t, writeTurn(), llmtest.Turn{Text: "Wrote hello.txt."}.Reply())
	out, patch := t.TempDir(), filepath.Join(t.TempDir(), "p", "x.patch")
	var stdout, stderr bytes.Buffer
	res, err := Exec(t.Context(), ExecOptions{
		Task: spec, Repo: repo, Out: out, Events: "-", Patch: patch, Isolate: true, Quiet: true,
		BaseURL: srv.URL(), APIKey: "sk-unit-0123456789abcdef", Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil {
		t.Fatalf("Exec: %v\n%s", err, stderr.String())
	}
	recs := validLog(t, stdout.Bytes())
	var fin event.RunFinished
	if err := recs[len(recs)-1].Decode(&fin); err != nil || fin.Status != "success" || fin.PatchPath != patch || fin.FilesChanged != 1 {
		t.Errorf("run.finished %+v (%v)", fin, err)
	}
	// The typed result says what run.finished says.
	if !res.Reported || res.Status != fin.Status || res.ExitCode != fin.ExitCode || res.Steps != fin.Steps ||
		res.PatchPath != fin.PatchPath || len(res.Files) != fin.FilesChanged || res.Files[0].Path != "hello.txt" ||
		res.OutDir != out || res.EventsPath != "" || res.Error != nil || res.FinalMessage != fin.FinalMessage {
		t.Errorf("Result %+v does not match run.finished %+v", res, fin)
	}
	// validLog checked every line of stdout: the final message is not there.
	if stderr.Len() != 0 {
		t.Errorf("--quiet wrote to stderr: %s", stderr.String())
	}
	if p, err := os.ReadFile(patch); err != nil || !strings.Contains(string(p), "+hello") {
		t.Errorf("patch %q, %v", p, err)
	}
	for _, f := range []string{"result.json", "summary.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "hello.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--isolate wrote into the repo: %v", err)
	}
}

// TestExecOutDirInWorkTree: an out dir inside the work tree is not part of
// the patch.
func TestExecOutDirInWorkTree(t *testing.T) {
	spec, repo := execFixture(t)
	srv := newModel(t, writeTurn(), llmtest.Turn{Text: "Done."}.Reply())
	out := filepath.Join(repo, ".runner", "runs", "x")
	var stdout bytes.Buffer
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(),
		APIKey: "sk-unit-0123456789abcdef", Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	patch, err := os.ReadFile(filepath.Join(out, "changes.patch"))
	if err != nil || !strings.Contains(string(patch), "hello.txt") || strings.Contains(string(patch), ".runner") {
		t.Errorf("patch should hold hello.txt only:\n%s", patch)
	}
	if stdout.String() != "Done.\n" {
		t.Errorf("stdout %q, want the final message", stdout.String())
	}
}

// TestExecStatuses: how the agent's endings become exit codes, and that
// every one still ends the log with run.finished.
func TestExecStatuses(t *testing.T) {
	tests := map[string]struct {
		replies []llmtest.Reply
		code    int
		status  event.Status
	}{
		"max steps": {[]llmtest.Reply{writeTurn(), writeTurn()}, ExitTaskFailed, event.StatusMaxSteps},
		"provider":  {[]llmtest.Reply{llmtest.HTTPError(401, `{"error":{"message":"bad key","type":"invalid_request_error"}}`)}, ExitInfra, event.StatusError},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			spec, repo := execFixture(t)
			srv := newModel(t, tt.replies...)
			out := t.TempDir()
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(),
				APIKey: "sk-unit-0123456789abcdef"})
			if got := ExitCode(err); got != tt.code {
				t.Fatalf("exit %d (%v), want %d", got, err, tt.code)
			}
			data, rerr := os.ReadFile(filepath.Join(out, "events.jsonl"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			recs := validLog(t, data)
			var fin event.RunFinished
			if err := recs[len(recs)-1].Decode(&fin); err != nil || fin.Status != tt.status || fin.ExitCode != tt.code || fin.Error == nil {
				t.Errorf("run.finished %+v (%v), want %s", fin, err, tt.status)
			}
		})
	}
}

// TestExecSetupErrors: problems found before the out dir exists write
// nothing and map to exit 2.
func TestExecSetupErrors(t *testing.T) {
	spec, repo := execFixture(t)
	tests := map[string]ExecOptions{
		"no key":       {Task: spec, Repo: repo},
		"no repo":      {Task: spec, Repo: filepath.Join(repo, "missing"), APIKey: "k"},
		"no cassette":  {Task: spec, Repo: repo, Replay: filepath.Join(repo, "missing.jsonl")},
		"bad input":    {Task: spec, Repo: repo, APIKey: "k", Inputs: map[string]string{"nope": "1"}},
		"missing spec": {Task: filepath.Join(repo, "none.yaml"), Repo: repo, APIKey: "k"},
	}
	for name, o := range tests {
		t.Run(name, func(t *testing.T) {
			o.Out = filepath.Join(t.TempDir(), "out")
			res, err := Exec(t.Context(), o)
			if res.Reported {
				t.Errorf("Result %+v reported for a run that never started", res)
			}
			if ExitCode(err) != ExitUsage {
				t.Fatalf("exit %d (%v), want 2", ExitCode(err), err)
			}
			if _, serr := os.Stat(o.Out); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("out dir created: %v", serr)
			}
		})
	}
}

// newModel starts the fake model server; taking its lock once (Requests)
// orders llmtest's write of the replies, made after the server started,
// before the runner's requests, as the race detector sees it.
func newModel(t *testing.T, replies ...llmtest.Reply) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(t, replies...)
	_ = srv.Requests()
	return srv
}

// TestExecInfraFailureStillFinishes: a base snapshot that cannot be taken
// (the snapshot store would lie inside the work tree) ends the run with
// status error and exit 3, and the log still runs from run.started to
// run.finished, with the patch file, result.json and summary.md written.
func TestExecInfraFailureStillFinishes(t *testing.T) {
	spec, repo := execFixture(t)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(repo, "cache"))
	srv := newModel(t)
	out := t.TempDir()
	res, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(),
		APIKey: "sk-unit-0123456789abcdef"})
	if ExitCode(err) != ExitInfra {
		t.Fatalf("exit %d (%v), want 3", ExitCode(err), err)
	}
	if !res.Reported || res.Status != event.StatusError || res.ExitCode != ExitInfra || res.Error == nil || res.Error.Class != event.ClassInfra {
		t.Errorf("Result %+v, want a reported infra error", res)
	}
	data, rerr := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	recs := validLog(t, data)
	var fin event.RunFinished
	if recs[0].Type != "run.started" || recs[len(recs)-1].Decode(&fin) != nil || fin.Status != "error" || fin.Error.Class != "infra" {
		t.Errorf("log %v, run.finished %+v", recs, fin)
	}
	for _, f := range []string{"changes.patch", "result.json", "summary.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Error("the model was called after the failure")
	}
}
