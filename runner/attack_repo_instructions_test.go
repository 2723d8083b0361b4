package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/safefs"
)

// TestAttackRepoInstructionsLink: a repository whose AGENTS.md links to a
// file outside the work tree (a key, /proc/self/environ) does not get it
// into the system prompt; CLAUDE.md, a regular file, is read instead. The
// control follows links as os.ReadFile did, and the secret leaks.
// Not parallel: SetFollowLinks switches every safefs.Root of the process.
func TestAttackRepoInstructionsLink(t *testing.T) {
	const secret = "sk-outside-0123456789"
	outside := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(outside, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "CLAUDE.md"), []byte("Use tabs.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	system := func() string {
		m := newModel()
		cfg := testConfig(m, nil, &fakeTool{name: "read"})
		cfg.WorkTree = dir
		runTest(t, cfg)
		return m.reqs()[0].Messages[0].Content
	}
	got := system()
	if strings.Contains(got, secret) {
		t.Errorf("the linked file's text is in the system prompt:\n%s", got)
	}
	if !strings.Contains(got, "(from CLAUDE.md)\nUse tabs.") {
		t.Errorf("CLAUDE.md was not read after the refused link:\n%s", got)
	}
	safefs.SetFollowLinks(true)
	defer safefs.SetFollowLinks(false)
	if got := system(); !strings.Contains(got, secret) {
		t.Errorf("control: following links, the secret should leak:\n%s", got)
	}
}

// TestSystemPromptNoRepoInstructions: NoRepoInstructions leaves AGENTS.md
// and CLAUDE.md out of the system prompt.
func TestSystemPromptNoRepoInstructions(t *testing.T) {
	t.Parallel()
	for _, name := range RepoInstructionFiles() {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("Always run make.\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, off := range []bool{false, true} {
			m := newModel()
			cfg := testConfig(m, nil, &fakeTool{name: "read"})
			cfg.WorkTree, cfg.NoRepoInstructions = dir, off
			runTest(t, cfg)
			if got := m.reqs()[0].Messages[0].Content; strings.Contains(got, "Always run make.") == off {
				t.Errorf("%s, NoRepoInstructions %v: system prompt\n%s", name, off, got)
			}
		}
	}
}
