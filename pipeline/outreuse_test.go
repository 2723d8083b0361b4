package pipeline

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestOutReuseIsNoted: a second run with the --out of a finished run says
// on stderr that it replaces that run's outputs, naming the run and its
// status; a fresh --out says nothing; --continue of the very dir --out
// names is refused before anything is written (it would overwrite the
// run it reads).
func TestOutReuseIsNoted(t *testing.T) {
	spec, repo := execFixture(t)
	out := filepath.Join(t.TempDir(), "same")
	run := func() (Result, string, error) {
		srv := newModel(t, llmtest.Turn{Text: "Done."}.Reply())
		var stderr bytes.Buffer
		res, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), APIKey: testKey,
			Stdout: &bytes.Buffer{}, Stderr: &stderr})
		return res, stderr.String(), err
	}
	first, stderr, err := run()
	if err != nil {
		t.Fatalf("first run: %v\n%s", err, stderr)
	}
	if strings.Contains(stderr, "replaces") {
		t.Errorf("a fresh --out is noted:\n%s", stderr)
	}
	_, stderr, err = run()
	want := "runner: note: --out " + out + " holds the outputs of run " + first.RunID + " (status success): this run replaces them"
	if err != nil || !strings.Contains(stderr, want) {
		t.Errorf("second run (%v): stderr lacks %q:\n%s", err, want, stderr)
	}

	_, err = Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out + "/", Continue: out, Prompt: "more", APIKey: testKey,
		BaseURL: "http://127.0.0.1:1/v1", Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}})
	if ExitCode(err) != ExitUsage || err == nil || !strings.Contains(err.Error(), "is the run --continue reads") {
		t.Errorf("--continue of the --out dir: exit %d, %v; want a usage error", ExitCode(err), err)
	}
}
