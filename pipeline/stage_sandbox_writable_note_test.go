package pipeline

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestWritableUnsetNote: a sandbox.writable entry whose variable is unset
// is skipped; the note on stderr comes only when no entry of the list
// opened a directory (a list that names its own fallback, as the examples'
// [$GOCACHE, ~/.cache/go-build] does, is not noise on every run).
func TestWritableUnsetNote(t *testing.T) {
	const note = "sandbox.writable $RUNNER_TEST_UNSET_DIR is skipped"
	for _, tt := range []struct {
		name, writable string
		note           bool
	}{
		{"with a fallback", `["$RUNNER_TEST_UNSET_DIR", "~/.cache/go-build"]`, false},
		{"alone", `["$RUNNER_TEST_UNSET_DIR"]`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec, repo := execFixture(t)
			mustWrite(t, spec, runSpec+"sandbox:\n  writable: "+tt.writable+"\n")
			srv := newModel(t, llmtest.Turn{Text: "Done."}.Reply())
			var stdout, stderr bytes.Buffer
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(t.TempDir(), "out"), BaseURL: srv.URL(),
				APIKey: testKey, Environ: []string{"HOME=" + t.TempDir()}, Stdout: &stdout, Stderr: &stderr})
			if err != nil {
				t.Fatalf("exec: %v\n%s", err, stderr.String())
			}
			if got := strings.Contains(stderr.String(), note); got != tt.note {
				t.Errorf("note shown %v, want %v:\n%s", got, tt.note, stderr.String())
			}
		})
	}
}
