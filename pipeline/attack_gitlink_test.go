package pipeline

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// gitlinkAttack makes a nested repository, adds it to the index as a
// gitlink and sets core.fsmonitor in the nested repository's own
// config: the user's next `git status` recurses into it and runs the
// program (touch mark).
func gitlinkAttack(mark string) string {
	return "git init -q sub && git -C sub -c user.email=a@b -c user.name=a commit -q --allow-empty -m s && git add sub\n" +
		"git -C sub config core.fsmonitor 'touch " + mark + "; false'\necho x > sub/f\nexit 0\n"
}

// TestAttackGitlinkFsmonitor: after the run, `git status` and `git
// checkout` on the host run nothing the command planted through a
// gitlink it added; the tripwire puts the index back and names it.
// Namespaces make .git read-only, so there `git add` fails.
func TestAttackGitlinkFsmonitor(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real bash under each layer set (-short)")
	}
	for _, pin := range repairPins() {
		t.Run(pin, func(t *testing.T) {
			skipUnavailable(t, pin)
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			mark := filepath.Join(t.TempDir(), "mark")
			repo := gittest.Repo(t, map[string]string{"Makefile": "all:\n\tsh attack.sh\n", "attack.sh": gitlinkAttack(mark)})
			r := testRun{spec: gateSpec, repo: repo, replies: []llmtest.Reply{makeTurn(), llmtest.Turn{Text: "Built."}.Reply()}}.sandboxed(pin).exec(t)
			_ = os.Remove(mark) // a touch inside the run is the command's own business
			if hostGitRuns(t, repo, mark) {
				t.Errorf("git status/checkout on the host ran the core.fsmonitor of a gitlink the command added (run error %v)", r.err)
			}
			gates, _ := gatesOf(t, r.recs)
			named := slices.ContainsFunc(gates, func(g event.GateFailed) bool {
				return g.Gate == event.GateGitTripwire && slices.Contains(g.Paths, ".git/index") && strings.Contains(g.Message, "sub")
			})
			if gitOut(t, repo, "ls-files", "-s", "sub") != "" && !named {
				t.Errorf("the gitlink is still in the index and no gate names it: %+v", gates)
			}
			t.Logf("gates %+v", gates)
		})
	}
}

// TestAttackGitlinkFsmonitorControl runs the same script without the
// runner: the host's git status then runs the planted program.
func TestAttackGitlinkFsmonitorControl(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	repo := gittest.Repo(t, map[string]string{"attack.sh": gitlinkAttack(mark)})
	cmd := exec.CommandContext(t.Context(), "bash", "attack.sh")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("attack.sh: %v\n%s", err, out)
	}
	_ = os.Remove(mark)
	if !hostGitRuns(t, repo, mark) {
		t.Errorf("without the runner's repair git status ran nothing: TestAttackGitlinkFsmonitor proves nothing")
	}
}

// gitOut runs git in dir and returns its trimmed output ("" on error).
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
