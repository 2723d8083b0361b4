package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestExecRepoInstructions: the work tree's AGENTS.md goes into the
// system prompt and run.started names it, unless the spec sets
// repo_instructions: false; CLAUDE.md is read when AGENTS.md is absent.
func TestExecRepoInstructions(t *testing.T) {
	tests := []struct {
		name, key, file string
		want            bool
	}{
		{"agents", "", "AGENTS.md", true},
		{"claude", "", "CLAUDE.md", true},
		{"agents off", "repo_instructions: false\n", "AGENTS.md", false},
		{"claude off", "repo_instructions: false\n", "CLAUDE.md", false},
		{"agents on", "repo_instructions: true\n", "AGENTS.md", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, repo := execFixture(t)
			mustWrite(t, spec, runSpec+tt.key)
			mustWrite(t, filepath.Join(repo, tt.file), "Always run make lint.\n")
			srv := newModel(t, llmtest.Turn{Text: "done"}.Reply())
			out := t.TempDir()
			if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
				APIKey: "sk-unit-0123456789abcdef"}); err != nil {
				t.Fatal(err)
			}
			system, _ := srv.Requests()[0].Messages()[0]["content"].(string)
			if got := strings.Contains(system, "# Repository instructions (from "+tt.file+")\nAlways run make lint."); got != tt.want {
				t.Errorf("system prompt holds %s: %v, want %v\n%s", tt.file, got, tt.want, system)
			}
			log, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(log), "\n")
			if got := strings.Contains(first, `"repo_instructions":"`+tt.file+`"`); got != tt.want {
				t.Errorf("run.started names %s: %v, want %v\n%s", tt.file, got, tt.want, first)
			}
		})
	}
}
