package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// TestNotASpecHintWritesUsableSpec runs the printf line of the hint with
// real sh and checks the spec it writes gives the agent read and edit.
func TestNotASpecHintWritesUsableSpec(t *testing.T) {
	dir := t.TempDir()
	prompt := "fix the tests: it's broken"
	err := notASpec(filepath.Join(dir, prompt))
	if err == nil {
		t.Fatal("notASpec: no hint for a prompt")
	}
	var line string
	for _, l := range strings.Split(err.Error(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "printf ") {
			line = strings.TrimSpace(l)
		}
	}
	if line == "" {
		t.Fatalf("no printf line in hint:\n%s", err)
	}
	cmd := exec.CommandContext(t.Context(), "sh", "-c", line)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "task.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.LoadPartial("task.yaml", data)
	if err != nil {
		t.Fatalf("hint's spec does not load: %v\n%s", err, data)
	}
	for _, perm := range []string{"read", "edit"} {
		if got := s.Permissions[perm]; got != "allow" {
			t.Errorf("permissions.%s = %v, want allow\n%s", perm, got, data)
		}
	}
	if !strings.Contains(s.Prompt, prompt) {
		t.Errorf("prompt = %q, want it to hold %q", s.Prompt, prompt)
	}
	if !strings.Contains(err2s(notASpec(prompt)), "permissions.bash") {
		t.Error("hint does not say bash needs permissions.bash rules")
	}
}

func err2s(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
