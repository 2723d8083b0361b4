package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// gitfileAttack makes a repository of its own with core.fsmonitor set
// and points the submodule's gitfile (sub/.git, in the work tree) at
// it: the user's next `git status` recurses into sub through it.
func gitfileAttack(mark string) string {
	return "git init -q evil && git -C evil -c user.email=a@b -c user.name=a commit -q --allow-empty -m e\n" +
		"git -C evil config core.fsmonitor 'touch " + mark + "; false'\nprintf 'gitdir: ../evil/.git\\n' > sub/.git\nexit 0\n"
}

// embeddedAttack sets core.fsmonitor in the submodule's own embedded
// git directory (sub/.git a directory, as `git submodule add` leaves an
// existing clone).
func embeddedAttack(mark string) string {
	return "git -C sub config core.fsmonitor 'touch " + mark + "; false'\nexit 0\n"
}

// repoWithSubmodule is a repository with a submodule at sub and files:
// its git directory absorbed into .git/modules/sub (sub/.git a
// gitfile), or with embedded, a directory at sub/.git.
func repoWithSubmodule(t *testing.T, files map[string]string, embedded bool) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "subsrc")
	gittest.Init(t, src, map[string]string{"lib.txt": "lib\n"})
	repo := gittest.Repo(t, files)
	if embedded {
		gittest.Run(t, repo, "clone", "-q", src, "sub")
	}
	gittest.Run(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub")
	gittest.Run(t, repo, "commit", "-qm", "submodule")
	return repo
}

// TestAttackSubmoduleGitfile: after the run, git status and checkout on
// the host run nothing through a submodule gitfile a command
// redirected; the gate names it.
func TestAttackSubmoduleGitfile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real bash under each layer set (-short)")
	}
	for _, c := range []struct {
		name     string
		attack   func(string) string
		embedded bool
		path     string // what the gate names
	}{{"gitfile", gitfileAttack, false, "sub/.git"}, {"embedded", embeddedAttack, true, "sub/.git/config"}} {
		for _, pin := range repairPins() {
			t.Run(c.name+"/"+pin, func(t *testing.T) {
				skipUnavailable(t, pin)
				t.Setenv("XDG_CACHE_HOME", t.TempDir())
				mark := filepath.Join(t.TempDir(), "mark")
				repo := repoWithSubmodule(t, map[string]string{"Makefile": "all:\n\tsh attack.sh\n", "attack.sh": c.attack(mark)}, c.embedded)
				r := testRun{spec: gateSpec, repo: repo, replies: []llmtest.Reply{makeTurn(), llmtest.Turn{Text: "Built."}.Reply()}}.sandboxed(pin).exec(t)
				_ = os.Remove(mark)
				if hostGitRuns(t, repo, mark) {
					t.Errorf("git status/checkout on the host ran the core.fsmonitor of a repository the submodule's gitfile was pointed at (run error %v)", r.err)
				}
				gates, _ := gatesOf(t, r.recs)
				if !slices.ContainsFunc(gates, func(g event.GateFailed) bool { return slices.Contains(g.Paths, c.path) }) {
					t.Errorf("no gate names the submodule's gitfile: %+v", gates)
				}
				t.Logf("gates %+v", gates)
			})
		}
	}
}

// TestAttackSubmoduleGitfileControl runs the same script without the
// runner: the host's git status then runs the planted program.
func TestAttackSubmoduleGitfileControl(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	repo := repoWithSubmodule(t, map[string]string{"attack.sh": gitfileAttack(mark)}, false)
	cmd := exec.CommandContext(t.Context(), "bash", "attack.sh")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("attack.sh: %v\n%s", err, out)
	}
	_ = os.Remove(mark)
	if !hostGitRuns(t, repo, mark) {
		t.Errorf("without the runner's repair git status ran nothing: TestAttackSubmoduleGitfile proves nothing")
	}
}
