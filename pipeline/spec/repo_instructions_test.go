package spec

import (
	"strings"
	"testing"
)

// TestRepoInstructionsKey: repo_instructions is a boolean, true when
// absent.
func TestRepoInstructionsKey(t *testing.T) {
	t.Parallel()
	base := "version: 1\nname: t\nprompt: p\n"
	for yaml, want := range map[string]bool{"": true, "repo_instructions: true\n": true, "repo_instructions: false\n": false} {
		s, err := LoadBytes("task.yaml", []byte(base+yaml))
		if err != nil || s.ReadsRepoInstructions() != want {
			t.Errorf("%q: reads %v, error %v; want %v", yaml, s.ReadsRepoInstructions(), err, want)
		}
	}
	_, err := LoadBytes("task.yaml", []byte(base+"repo_instructions: no\n"))
	if err == nil || !strings.Contains(err.Error(), "task.yaml:4:") || !strings.Contains(err.Error(), "repo_instructions") {
		t.Errorf("repo_instructions: no: error %v", err)
	}
}
