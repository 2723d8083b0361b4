package batch

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/pipeline"
)

// noteCassette writes a two-turn scripted session: write NOTE.md, then
// finish.
func noteCassette(t testing.TB, path string) {
	t.Helper()
	x := func(turn llmtest.Turn) llm.Exchange {
		return llm.Exchange{Request: llm.RecordedRequest{Method: "POST", Path: "/v1/chat/completions"},
			Response: llm.RecordedResponse{Status: 200, Headers: map[string]string{"Content-Type": "text/event-stream"}, Body: string(turn.SSE())}}
	}
	var b bytes.Buffer
	if err := llm.WriteCassette(&b,
		x(llmtest.Turn{Model: "gpt-4.1-mini", ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"NOTE.md","content":"hello {{X}}\n"}`)}}),
		x(llmtest.Turn{Model: "gpt-4.1-mini", Text: "Wrote NOTE.md."}),
	); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

const noteTask = `version: 1
name: note
model: gpt-4.1-mini
prompt: Add NOTE.md for {{ .Inputs.who }}.
inputs:
  who: {default: nobody}
permissions:
  read: allow
  edit: {NOTE.md: allow}
limits:
  max_cost_usd: 2 # per run
github:
  pull_request:
    branch: runner/note-{{ .Inputs.who }}
    title: Add a note for {{ .Inputs.who }}
    labels: [bot]
`

// TestExecutorThenPublisher runs the pipeline executor on a clone of a
// local "origin" (offline, from a cassette), then publishes the result
// with the GitHub publisher against a fake API, pushing to the origin.
func TestExecutorThenPublisher(t *testing.T) {
	root := t.TempDir()
	origin := filepath.Join(root, "origin")
	gittest.Init(t, origin, map[string]string{"README.md": "# app\n"})
	base := gittest.Run(t, origin, "rev-parse", "HEAD")
	work := filepath.Join(root, "work")
	gittest.Run(t, root, "clone", "-q", origin, work)
	dir := filepath.Join(root, "out")
	taskPath, cassette := filepath.Join(root, "task.yaml"), filepath.Join(root, "session.jsonl")
	if err := os.WriteFile(taskPath, []byte(noteTask), 0o644); err != nil {
		t.Fatal(err)
	}
	noteCassette(t, cassette)
	outDir := filepath.Join(dir, "app")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}

	exec := &PipelineExecutor{Replay: cassette}
	o, err := exec.Exec(t.Context(), Job{RepoID: "app", WorkDir: work, SpecPath: taskPath,
		Inputs: map[string]string{"who": "ops"}, OutDir: outDir, MaxCostUSD: 0.5, Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != "success" || o.FilesChanged != 1 || o.Steps != 2 || o.PatchPath != filepath.Join(outDir, "changes.patch") || o.Infra() {
		t.Fatalf("outcome = %+v", o)
	}
	if got := readFile(t, filepath.Join(outDir, TreeDir, "NOTE.md")); got != "hello {{X}}\n" {
		t.Errorf("saved tree NOTE.md = %q", got)
	}
	if spec := readFile(t, filepath.Join(outDir, TaskFile)); spec != noteTask {
		t.Errorf("the stored task spec is not the task file as is (the cost cap is an exec option):\n%s", spec)
	}

	if _, err := FreezeManifest(dir, &Manifest{Version: 1, Name: "t", Repos: []Repo{{ID: "app", URL: "https://github.com/acme/app"}}}); err != nil {
		t.Fatal(err)
	}
	log, err := openResultsLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	res := RepoResult{Repo: "https://github.com/acme/app", ID: "app", Status: StatusSuccess, Commit: base,
		FilesChanged: 1, PatchPath: "app/changes.patch", CostUSD: o.CostUSD, FinishedAt: time.Now().UTC()}
	if err := log.Append(res); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}

	reg := githubtest.New(t, "/api/v3")
	reg.Register(http.MethodGet, "/repos/acme/app", githubtest.JSON(200, map[string]any{"default_branch": "main"}))
	reg.Register(http.MethodGet, "/repos/acme/app/pulls", githubtest.JSON(200, []any{})).WithQuery("head", "acme:runner/note-ops")
	var created map[string]any
	reg.Register(http.MethodPost, "/repos/acme/app/pulls", githubtest.Capture(t, &created, githubtest.JSON(201,
		map[string]any{"number": 7, "html_url": "https://github.com/acme/app/pull/7", "head": map[string]any{"ref": "runner/note-ops"}})))
	reg.Register(http.MethodPost, "/repos/acme/app/issues/7/labels", githubtest.JSON(200, []any{}))

	var progress bytes.Buffer
	err = Publish(t.Context(), dir, PublishOptions{Progress: &progress, MinInterval: time.Millisecond,
		Publisher: &GitHubPublisher{Dir: dir, Client: reg.Client(), Remote: func(owner, repo string) string { return origin }}})
	if err != nil {
		t.Fatalf("publish: %v\n%s", err, progress.String())
	}
	if got := gittest.Run(t, origin, "show", "runner/note-ops:NOTE.md"); got != "hello {{X}}" {
		t.Errorf("pushed NOTE.md = %q", got)
	}
	if got := gittest.Run(t, origin, "rev-parse", "runner/note-ops^"); got != base {
		t.Errorf("branch parent = %s, want the base %s", got, base)
	}
	if created["title"] != "Add a note for ops" || created["base"] != "main" || created["head"] != "runner/note-ops" {
		t.Errorf("created pull request = %v", created)
	}
	results, err := ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if last := Latest(results)["app"]; last.PRURL != "https://github.com/acme/app/pull/7" || last.PublishedAt == nil {
		t.Errorf("recorded result = %+v", last)
	}
}

// TestExecutorSpecErrorIsRefused: an invalid spec (exit code 2) is a Go
// error that keeps exit code 2 (Run records nothing for the repository
// and stops), not an outcome recorded as the task's failure.
func TestExecutorSpecErrorIsRefused(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	gittest.Init(t, work, map[string]string{"README.md": "x\n"})
	o, err := (&PipelineExecutor{Replay: "unused"}).Exec(t.Context(), Job{RepoID: "x", WorkDir: work,
		SpecInline: []byte("version: 1\nname: x\nprompt: hi\npromt: typo\n"), OutDir: filepath.Join(root, "out"), Attempt: 1})
	if pipeline.ExitCode(err) != pipeline.ExitUsage || !refusedErr(err) || !strings.Contains(err.Error(), `unknown key "promt"`) {
		t.Fatalf("Exec = %+v, %v; want an error with exit code 2 naming the problem", o, err)
	}
}
