package batch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

// TestTaskSpecTravelsWithResults: the executor stores the task spec in
// out/<id>/task.yaml even when it runs the batch's task file as is, merge
// carries it, and the publisher reads the pull request settings from it
// after the original task file is gone (another machine).
func TestTaskSpecTravelsWithResults(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	work := filepath.Join(root, "work")
	gittest.Init(t, work, map[string]string{"README.md": "# app\n"})
	taskPath, cassette := filepath.Join(root, "task.yaml"), filepath.Join(root, "session.jsonl")
	write(t, taskPath, noteTask)
	noteCassette(t, cassette)
	shard := filepath.Join(root, "shard0")
	outDir := filepath.Join(shard, "app")

	o, err := (&PipelineExecutor{Replay: cassette}).Exec(t.Context(), Job{RepoID: "app", WorkDir: work, SpecPath: taskPath,
		Inputs: map[string]string{"who": "ops"}, OutDir: outDir, Attempt: 1})
	if err != nil || o.Status != "success" {
		t.Fatalf("Exec = %+v, %v", o, err)
	}
	if got := readFile(t, filepath.Join(outDir, TaskFile)); got != noteTask {
		t.Errorf("stored task spec = %q, want the batch's task file as is", got)
	}

	if _, err := FreezeManifest(shard, &Manifest{Version: 1, Name: "t", Repos: []Repo{{ID: "app", URL: "https://github.com/acme/app"}}}); err != nil {
		t.Fatal(err)
	}
	log, err := openResultsLog(shard)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Append(RepoResult{Repo: "https://github.com/acme/app", ID: "app", Status: StatusSuccess, FilesChanged: 1,
		PatchPath: "app/changes.patch", FinishedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(root, "merged")
	if _, err := Merge(t.Context(), []string{shard}, merged); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(taskPath); err != nil {
		t.Fatal(err)
	}
	spec := taskSpecOf(filepath.Join(merged, "app"), taskPath)
	if spec == nil || spec.GitHub.PullRequest == nil || spec.GitHub.PullRequest.Title == "" {
		t.Fatalf("the merged out dir has no task spec with github.pull_request: %+v", spec)
	}
}

// TestJobCostCapIsAnOption: the job's cost cap reaches the run as an exec
// option (run.started names it as the run's limit) and the task spec is
// stored and run unchanged.
func TestJobCostCapIsAnOption(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	work := filepath.Join(root, "work")
	gittest.Init(t, work, map[string]string{"README.md": "# app\n"})
	taskPath, cassette := filepath.Join(root, "task.yaml"), filepath.Join(root, "session.jsonl")
	write(t, taskPath, noteTask)
	noteCassette(t, cassette)
	outDir := filepath.Join(root, "out", "app")
	o, err := (&PipelineExecutor{Replay: cassette}).Exec(t.Context(), Job{RepoID: "app", WorkDir: work, SpecPath: taskPath,
		Inputs: map[string]string{"who": "ops"}, OutDir: outDir, MaxCostUSD: 0.25, Attempt: 1})
	if err != nil || o.Status != event.StatusSuccess {
		t.Fatalf("Exec = %+v, %v", o, err)
	}
	if got := readFile(t, filepath.Join(outDir, TaskFile)); got != noteTask {
		t.Errorf("stored task spec = %q, want the batch's task file as is", got)
	}
	started, err := runStarted(filepath.Join(outDir, outdir.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	if started.Limits.MaxCostUSD != 0.25 || started.SpecPath != taskPath {
		t.Errorf("run.started limits %+v, spec %s; want max_cost_usd 0.25 from %s", started.Limits, started.SpecPath, taskPath)
	}
}

// TestTaskFileKeptWithSandboxOff: with sandbox.mode off the run guards its
// out dir against commands (every entry it did not write is removed and
// the run fails with gate runner_state); the task.yaml the executor put
// there first is the executor's own, not a command's: the run succeeds and
// keeps it, from a task file or an inline task.
func TestTaskFileKeptWithSandboxOff(t *testing.T) {
	t.Parallel()
	task := noteTask + "sandbox:\n  mode: off\n"
	for _, inline := range []bool{false, true} {
		t.Run(map[bool]string{false: "task file", true: "inline task"}[inline], func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			work := filepath.Join(root, "work")
			gittest.Init(t, work, map[string]string{"README.md": "# app\n"})
			taskPath, cassette := filepath.Join(root, "task.yaml"), filepath.Join(root, "session.jsonl")
			write(t, taskPath, task)
			noteCassette(t, cassette)
			job := Job{RepoID: "app", WorkDir: work, SpecPath: taskPath, Inputs: map[string]string{"who": "ops"},
				OutDir: filepath.Join(root, "out", "app"), Attempt: 1}
			if inline {
				job.SpecPath, job.SpecInline = "", []byte(task)
			}
			o, err := (&PipelineExecutor{Replay: cassette}).Exec(t.Context(), job)
			if err != nil || o.Status != event.StatusSuccess {
				t.Fatalf("Exec = %+v, %v", o, err)
			}
			if got := readFile(t, filepath.Join(job.OutDir, TaskFile)); got != task {
				t.Errorf("stored task spec = %q, want the task as run", got)
			}
		})
	}
}
