package pipeline

import (
	"path/filepath"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// TestBashStepSnapshotIsWatched: after a bash step, the step's patch event
// comes from the inotify watch (tracking "watch") and lists the files the
// command wrote (a nested directory too); after a bash step that changes
// the root .gitignore it says it walked in full and why; after the write
// tool it used the reported paths. The final patch comes from the watch
// too, holds what a check wrote after the last step, and its tree is the
// one a full walk in a fresh store records.
func TestBashStepSnapshotIsWatched(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	spec := filepath.Join(t.TempDir(), "task.yaml")
	mustWrite(t, spec, stepBenchSpec+"checks:\n  - name: late\n    run: echo late > sub/late.txt\n")
	repo := filepath.Join(t.TempDir(), "repo")
	mustWrite(t, filepath.Join(repo, "README"), "unit\n")
	mustWrite(t, filepath.Join(repo, "sub", "keep.txt"), "k\n")
	run := testRun{specFile: spec, repo: repo, replies: []llmtest.Reply{
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"echo one >> notes.txt"}`)}}.Reply(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"echo two > sub/keep.txt"}`)}}.Reply(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"echo '*.log' > .gitignore"}`)}}.Reply(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"w.txt","content":"w\n"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply()}}.exec(t)
	if run.err != nil || run.res.ExitCode != 0 {
		t.Fatalf("Exec: exit %d, %v\n%s", run.res.ExitCode, run.err, run.stderr)
	}
	var patches []event.Patch
	for _, r := range run.recs {
		if r.Type == "patch" {
			var p event.Patch
			if err := r.Decode(&p); err != nil {
				t.Fatal(err)
			}
			patches = append(patches, p)
		}
	}
	if len(patches) != 5 {
		t.Fatalf("%d patch events, want 4 steps and the final one: %+v", len(patches), patches)
	}
	all := []string{".gitignore", "notes.txt", "sub/keep.txt", "w.txt"}
	final := []string{".gitignore", "notes.txt", "sub/keep.txt", "sub/late.txt", "w.txt"}
	wantFiles := [][]string{{"notes.txt"}, {"notes.txt", "sub/keep.txt"}, all[:3], all, final}
	wantHow := []string{"watch", "watch", "full (the root .gitignore changed)", "paths", "watch"}
	for i, p := range patches {
		var files []string
		for _, f := range p.Files {
			files = append(files, f.Path)
		}
		if p.Tracking != wantHow[i] || !equalStrings(files, wantFiles[i]) {
			t.Errorf("patch %d: tracking %q files %v, want %q %v", i, p.Tracking, files, wantHow[i], wantFiles[i])
		}
	}
	for _, r := range run.recs {
		if r.Type == "run.started" {
			t.Logf("run.started: %s", r.Raw)
		}
	}
	store, err := snapshot.Open(t.Context(), snapshot.Options{WorkTree: repo, StoreDir: t.TempDir(), Exclude: []string{".runner"}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	full, err := store.Track(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if patches[4].Tree != string(full) {
		t.Errorf("the final patch's tree %s differs from a full walk's %s", patches[4].Tree, full)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
