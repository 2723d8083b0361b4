package pipeline

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

// TestOutFilesNamesEveryFile: the Outputs line names each file of the
// out dir that is there, run.patch and history.jsonl included.
func TestOutFilesNamesEveryFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range outdir.Files() {
		mustWrite(t, filepath.Join(dir, name), "x")
	}
	if got, want := outFiles(dir), " ("+strings.Join(outdir.Files(), ", ")+")"; got != want {
		t.Errorf("outFiles = %q, want %q", got, want)
	}
	for _, name := range []string{outdir.RunPatch, outdir.HistoryFile} {
		if !strings.Contains(outFiles(dir), name) {
			t.Errorf("outFiles leaves out %s", name)
		}
	}
}

// TestExecOutputsLine: a run's Outputs line names the history it wrote.
func TestExecOutputsLine(t *testing.T) {
	spec, repo := execFixture(t)
	srv := newModel(t, llmtest.Turn{Text: "done"}.Reply())
	var stderr bytes.Buffer
	out := t.TempDir()
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(),
		APIKey: "sk-unit-0123456789abcdef", Stderr: &stderr, Stdout: &bytes.Buffer{}}); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^Outputs: ` + regexp.QuoteMeta(out) + ` \(.*history\.jsonl\)$`)
	if !want.MatchString(stderr.String()) {
		t.Errorf("stderr lacks %s:\n%s", want, stderr.String())
	}
}
