package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

// TestDefaultOutDirIsGitIgnored: a run in the repository with the default
// out dir (.runner/runs/<id> in the current directory) leaves git status
// clean but for the agent's own change, so `git add -A` after it does not
// commit the run's logs and history; the patch does not carry the
// .gitignore, and a .gitignore the user put there is left alone.
func TestDefaultOutDirIsGitIgnored(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	spec, repo := execFixture(t)
	gittest.Run(t, repo, "init", "-q")
	gittest.Run(t, repo, "add", "README")
	gittest.Run(t, repo, "-c", "user.email=u@example.com", "-c", "user.name=u", "commit", "-qm", "init")
	t.Chdir(repo)

	srv := newModel(t, writeTurn(), llmtest.Turn{Text: "Wrote hello.txt."}.Reply())
	res, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, BaseURL: srv.URL(), Quiet: true, APIKey: "sk-unit-0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if status := gittest.Run(t, repo, "status", "--porcelain", "--untracked-files=all"); status != "?? hello.txt" {
		t.Errorf("git status after a run with the default out dir:\n%s\nwant only ?? hello.txt", status)
	}
	ignore := filepath.Join(repo, ".runner", ".gitignore")
	if data, err := os.ReadFile(ignore); err != nil || string(data) != outdir.StateIgnore {
		t.Errorf(".runner/.gitignore = %q, %v", data, err)
	}
	patch, err := os.ReadFile(filepath.Join(repo, res.PatchPath))
	if err != nil || !strings.Contains(string(patch), "hello.txt") || strings.Contains(string(patch), ".gitignore") {
		t.Errorf("patch (%v):\n%s", err, patch)
	}

	mustWrite(t, ignore, "runs/\n") // the user's own
	srv = newModel(t, llmtest.Turn{Text: "Nothing to do."}.Reply())
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, BaseURL: srv.URL(), Quiet: true, APIKey: "sk-unit-0123456789abcdef"}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(ignore); string(data) != "runs/\n" {
		t.Errorf("the user's .runner/.gitignore was rewritten: %q", data)
	}
}
