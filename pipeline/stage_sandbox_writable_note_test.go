package pipeline

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// TestWritableUnsetNote: a sandbox.writable entry whose variable is unset
// is skipped; the note on stderr comes only when no entry of the list
// opened a directory (a list that names its own fallback, as the examples'
// [$GOCACHE, ~/.cache/go-build] does, is not noise on every run). The
// sandbox stage runs on the state it reads: the spec, the options and the
// work tree.
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
			task, err := spec.LoadBytes("task.yaml", []byte(runSpec+"sandbox:\n  writable: "+tt.writable+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			r := &execRun{opts: ExecOptions{Environ: []string{"HOME=" + t.TempDir()}, Stderr: &stderr},
				specState: specState{spec: task}, workspaceState: workspaceState{workTree: t.TempDir()},
				mcpState: mcpState{protected: &protectedValues{}}}
			if err := r.checkSandbox(t.Context()); err != nil {
				t.Fatalf("sandbox stage: %v\n%s", err, stderr.String())
			}
			if got := strings.Contains(stderr.String(), note); got != tt.note {
				t.Errorf("note shown %v, want %v:\n%s", got, tt.note, stderr.String())
			}
		})
	}
}
