package pipeline

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestExecConsoleColor runs with progress on a pipe (not a terminal) and
// checks that --color and the colour variables decide the escapes.
func TestExecConsoleColor(t *testing.T) {
	tests := []struct {
		name string
		mode event.ColorMode
		env  []string
		want bool
	}{
		{"pipe", event.ColorAuto, nil, false},
		{"CLICOLOR_FORCE", event.ColorAuto, []string{"CLICOLOR_FORCE=1"}, true},
		{"NO_COLOR beats CLICOLOR_FORCE", event.ColorAuto, []string{"CLICOLOR_FORCE=1", "NO_COLOR=1"}, false},
		{"always", event.ColorAlways, []string{"TERM=dumb"}, true},
		{"never", event.ColorNever, []string{"CLICOLOR_FORCE=1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, repo := execFixture(t)
			srv := newModel(t, writeTurn(), llmtest.Turn{Text: "Done."}.Reply())
			var stderr bytes.Buffer
			env := append([]string{"PATH=" + os.Getenv("PATH")}, tt.env...)
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(),
				APIKey: testKey, Stderr: &stderr, Environ: env, Color: tt.mode})
			if err != nil {
				t.Fatalf("Exec: %v\n%s", err, stderr.String())
			}
			if got := strings.Contains(stderr.String(), "\x1b["); got != tt.want {
				t.Errorf("colour escapes on stderr = %v, want %v:\n%q", got, tt.want, stderr.String())
			}
		})
	}
}
