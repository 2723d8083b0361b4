package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// The attacks on the work tree's own .git entry where it is no git
// directory: a linked worktree's gitfile (`git worktree add`), or no
// .git at all (a work tree below its repository's root, as in a
// monorepo). The user's next git command in the work tree finds its
// repository through that entry, so a command that points it at a
// repository of its own with core.fsmonitor set has that program run
// on the host, outside every sandbox.

// dotGitAttack is attack.sh: a repository with core.fsmonitor set in
// an ignored directory, then .git pointed at it (how says).
func dotGitAttack(mark, how string) string {
	s := "git init -q build/evil\ngit -C build/evil config core.fsmonitor 'touch " + mark + "; false'\n"
	switch how {
	case "gitfile": // rewrite the gitfile in place
		s += "printf 'gitdir: build/evil/.git\\n' > .git\n"
	default: // put a git directory where the gitfile was, or where none was
		s += "rm -f .git; mv build/evil/.git .git\n"
	}
	return s + "exit 0\n"
}

// dotGitCase is one layout: the work tree and its .git entry.
type dotGitCase struct {
	name, how string
	gitfile   bool // the work tree's .git is a gitfile
}

func dotGitCases() []dotGitCase {
	return []dotGitCase{
		{"worktree-gitfile", "gitfile", true},
		{"worktree-dir", "dir", true},
		{"below-root", "dir", false},
	}
}

// dotGitTree lays the case out under base and returns the work tree:
// a linked worktree of a repository, or its svc/ directory.
func dotGitTree(t *testing.T, base string, c dotGitCase, attack string) string {
	t.Helper()
	main := filepath.Join(base, "main")
	prefix := "svc/"
	if c.gitfile {
		prefix = ""
	}
	gittest.Init(t, main, map[string]string{
		prefix + ".gitignore": "build/\n", prefix + "attack.sh": attack, prefix + "README": "small\n",
	})
	if !c.gitfile {
		return filepath.Join(main, "svc")
	}
	tree := filepath.Join(base, "tree")
	gittest.Run(t, main, "worktree", "add", "-q", tree)
	return tree
}

// hostGitRunsIn runs git status and checkout in dir on the host and
// reports whether mark appeared.
func hostGitRunsIn(t *testing.T, dir, mark string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, args := range [][]string{{"status"}, {"checkout", "-q", "HEAD", "--", "."}} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		_ = cmd.Run() // a repository the repair took apart may be none
	}
	_, err := os.Stat(mark)
	return err == nil
}

// TestAttackWorkTreeDotGit: after the run, git status and checkout in
// the work tree on the host run nothing a command planted through the
// work tree's .git, under each layer set and with the sandbox off; the
// run fails with gate git_tripwire naming .git wherever the command
// could change it.
func TestAttackWorkTreeDotGit(t *testing.T) {
	avail := runnerLayers(t)
	for _, c := range dotGitCases() {
		for _, pin := range []string{"off", "landlock", "namespaces,landlock"} {
			t.Run(c.name+"/"+pin, func(t *testing.T) {
				for _, l := range strings.Split(pin, ",") {
					if l != "off" && !slices.Contains(avail, l) {
						t.Skipf("layer %s is not available here", l)
					}
				}
				t.Parallel()
				base := t.TempDir()
				mark := filepath.Join(base, "mark")
				tree := dotGitTree(t, base, c, dotGitAttack(mark, c.how))
				before, _ := os.ReadFile(filepath.Join(tree, ".git"))
				srv := newModel(t,
					llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"bash attack.sh"}`)}}.Reply(),
					llmtest.Turn{Text: "Built."}.Reply())
				spec := filepath.Join(base, "task.yaml")
				section, env := "", append(baseEnv(t), "OPENAI_API_KEY=x")
				if pin == "off" {
					section = "sandbox: {mode: \"off\"}\n"
				} else {
					env = append(env, "RUNNER_SANDBOX_LAYERS="+pin)
				}
				mustWriteFile(t, spec, "version: 1\nname: dotgit\nmodel: gpt-4.1-mini\nprompt: Build it.\n"+
					"permissions:\n  read: allow\n  edit: {\"**\": allow}\n  bash: {\"bash attack.sh\": allow}\nlimits: {max_steps: 4}\n"+section)
				out := filepath.Join(base, "out")
				res := runRunner(t, tree, env, "exec", spec, "--out", out, "--base-url", srv.URL())
				if hostGitRunsIn(t, tree, mark) {
					t.Fatalf("git status/checkout on the host ran the core.fsmonitor a command planted through .git (exit %d)\n%s", res.code, res.stderr)
				}
				after, _ := os.ReadFile(filepath.Join(tree, ".git"))
				if c.gitfile && string(after) != string(before) {
					t.Errorf("the work tree's gitfile is %q after the run, want %q", after, before)
				}
				gates := ofType[event.GateFailed](t, readEvents(t, filepath.Join(out, "events.jsonl")))
				named := slices.ContainsFunc(gates, func(g event.GateFailed) bool {
					return g.Gate == event.GateGitTripwire && slices.Contains(g.Paths, ".git")
				})
				// With namespaces a gitfile is a read-only mount: the command
				// could not change it, and there is nothing to name.
				if blocked := c.gitfile && strings.Contains(pin, "namespaces"); !blocked && (!named || res.code != 1) {
					t.Errorf("exit %d with gates %+v, want exit 1 and gate git_tripwire naming .git\n%s", res.code, gates, res.stderr)
				}
			})
		}
	}
}

// TestAttackWorkTreeDotGitControl runs the same scripts without the
// runner: the host's git status then runs the planted program.
func TestAttackWorkTreeDotGitControl(t *testing.T) {
	for _, c := range dotGitCases() {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			mark := filepath.Join(base, "mark")
			tree := dotGitTree(t, base, c, dotGitAttack(mark, c.how))
			cmd := exec.CommandContext(t.Context(), "bash", "attack.sh")
			cmd.Dir = tree
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("attack.sh: %v\n%s", err, out)
			}
			if !hostGitRunsIn(t, tree, mark) {
				t.Errorf("without the runner git status ran nothing: TestAttackWorkTreeDotGit proves nothing")
			}
		})
	}
}

// runnerLayers are the sandbox layers the runner binary gets on this
// machine, as `runner policy check --json` says (the test binary's own
// probe may differ: it is no sandbox helper).
func runnerLayers(t *testing.T) []string {
	t.Helper()
	spec := filepath.Join(t.TempDir(), "task.yaml")
	mustWriteFile(t, spec, "version: 1\nname: probe\nmodel: gpt-4.1-mini\nprompt: Probe.\n")
	res := runRunner(t, t.TempDir(), baseEnv(t), "policy", "check", spec, "--json", "--bash", "true")
	var v struct {
		Sandbox struct {
			Layers []string `json:"layers"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
		t.Fatalf("runner policy check --json: %v\n%s%s", err, res.stdout, res.stderr)
	}
	return v.Sandbox.Layers
}
