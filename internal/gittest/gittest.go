// Package gittest is the git helper of the module's tests: it runs the
// real git command with a fixed identity and no user or system config,
// and makes repositories with one commit.
//
// Imports: the standard library only.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Env is the environment git runs with: the process's, a fixed author
// and committer, and no system or global config (a developer's
// init.defaultBranch or hooks do not change a test).
func Env() []string {
	return append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}

// Run runs git with args in dir and returns its combined output, trimmed
// of surrounding white space; a failure ends the test with the output.
func Run(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.CommandContext(tb.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Init makes dir a repository on branch main with one commit holding
// files (slash paths relative to dir → content).
func Init(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	Run(tb, dir, "init", "-q", "-b", "main")
	Run(tb, dir, "add", "-A")
	Run(tb, dir, "commit", "-q", "-m", "base")
}

// Repo is Init in a new temporary directory named repo, whose path it
// returns.
func Repo(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "repo")
	Init(tb, dir, files)
	return dir
}
