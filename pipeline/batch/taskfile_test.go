package batch

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTaskSpecTravelsWithResults: the executor stores the task spec in
// out/<id>/task.yaml even when it runs the batch's task file as is, merge
// carries it, and the publisher reads the pull request settings from it
// after the original task file is gone (another machine).
func TestTaskSpecTravelsWithResults(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	work := filepath.Join(root, "work")
	makeRepo(t, work, map[string]string{"README.md": "# app\n"})
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
