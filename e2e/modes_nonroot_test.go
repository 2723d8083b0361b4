package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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

// nobody is the user the non-root runs run as when the tests run as root
// (setpriv drops to it); as another user they run as that user.
const nobody = 65534

// nonRoot prepares a directory tree a non-root runner can use: base (0755,
// owned by the user the runner will run as) and the command prefix that
// runs a program as that user. It skips when the tests run as root and
// setpriv is missing.
func nonRoot(t *testing.T) (base string, prefix []string) {
	t.Helper()
	base, err := os.MkdirTemp("", "runner-nonroot-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755) // what a command locked, should the runner not have put it back
			}
			return nil
		})
		_ = os.RemoveAll(base)
	})
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return base, nil
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skipf("running as root and setpriv (util-linux) is missing: cannot run the runner as a non-root user (%v)", err)
	}
	return base, []string{setpriv, fmt.Sprintf("--reuid=%d", nobody), fmt.Sprintf("--regid=%d", nobody), "--clear-groups", "--"}
}

// chownTree gives the tree at root to the non-root user (as root).
func chownTree(t *testing.T, root string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// modesAttack locks the runner's own directories outside the work tree:
// the out dir's tool-output directory, the out dir (both given) and the
// run's temporary directory (found in the runner's $TMPDIR, given). Each
// step prints a marker when it worked and when the lock held against the
// same user;
// then it prints enough (200,000 bytes) that bash keeps the full output
// in a file the runner creates in the locked out dir.
const modesAttack = `out=%s
rt=$(ls -d %s/runner-run-* 2>/dev/null | head -n 1)
echo "run temp dir: ${rt:-not visible}"
grep -E '^Cap(Inh|Prm|Eff|Amb):' /proc/self/status
chmod 000 "$out/tool-output" 2>/dev/null && echo ok:tool-output-locked
chmod 000 "$out" 2>/dev/null && echo ok:out-locked
touch "$out/probe" 2>/dev/null || echo ok:out-unwritable
chmod 000 "$rt" 2>/dev/null && echo ok:temp-locked
ls "$rt" >/dev/null 2>&1 || echo ok:temp-unreadable
seq 1 33000
exit 0
`

// TestModesOfOwnDirsNonRoot runs the attack on the modes for real with
// a non-root runner (setpriv to nobody when the tests run as root): after
// a first command whose long output made the out dir's tool-output
// directory, a command chmods 000 that directory, the runner's out dir
// (outside the work tree) and the run's temporary directory, then prints
// more than bash keeps in memory (the full output goes to a file the
// runner creates in the directory it just locked), and the next command
// does the same. Under Landlock only (no right for chmod) and with the
// sandbox off (the control) the chmods work and lock the user out (the
// markers); the runner puts the modes back (before a write that failed,
// after each command, before the outputs), every output is written, the
// run fails with gate runner_state naming the directories, and the temp
// dir is removed. Under namespaces the out dir and the temp dir are
// read-only or absent to commands: the chmods fail and the run succeeds
// (and a non-root runner gets the namespaces layer at all: the helper's
// uid map and ambient capabilities, none of them left to the command).
func TestModesOfOwnDirsNonRoot(t *testing.T) {
	for _, pin := range []string{"off", "landlock", "namespaces", "namespaces,landlock"} {
		t.Run(pin, func(t *testing.T) {
			t.Parallel()
			base, prefix := nonRoot(t)
			home, tmp, out := filepath.Join(base, "home"), filepath.Join(base, "tmp"), filepath.Join(base, "out")
			repo := filepath.Join(base, "repo")
			for _, d := range []string{home, tmp, repo} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			mustWriteFile(t, filepath.Join(repo, "attack.sh"), fmt.Sprintf(modesAttack, out, tmp))
			mustWriteFile(t, filepath.Join(repo, "README"), "small\n")
			gittest.Run(t, repo, "init", "-q", "-b", "main")
			gittest.Run(t, repo, "add", "-A")
			gittest.Run(t, repo, "commit", "-q", "-m", "init")
			section := ""
			if pin == "off" {
				section = "sandbox: {mode: \"off\"}\n"
			}
			spec := filepath.Join(base, "task.yaml")
			mustWriteFile(t, spec, `version: 1
name: modes
model: gpt-4.1-mini
prompt: Build.
permissions:
  read: allow
  bash: {"bash attack.sh": allow, "seq *": allow}
limits: {max_steps: 5}
`+section)
			bin := filepath.Join(base, "runner")
			copyFile(t, runnerBin, bin)
			chownTree(t, base)
			srv := newModel(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"seq 1 33000"}`)}}.Reply(),
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"bash attack.sh"}`)}}.Reply(),
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"seq 1 33000"}`)}}.Reply(),
				llmtest.Turn{Text: "Built."}.Reply())
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
				"NO_COLOR=1", "OPENAI_API_KEY=sk-test-0123456789abcdef"}
			if pin != "off" {
				env = append(env, "RUNNER_SANDBOX_LAYERS="+pin)
			}
			argv := append(slices.Clone(prefix), bin, "exec", spec, "--repo", repo, "--out", out, "--base-url", srv.URL())
			cmd := exec.CommandContext(t.Context(), argv[0], argv[1:]...)
			cmd.Dir, cmd.Env = repo, env
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.WaitDelay = 10 * time.Second
			err := cmd.Run()
			code := 0
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				code = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			logPath := filepath.Join(out, "events.jsonl")
			if _, err := os.Stat(logPath); err != nil {
				t.Fatalf("no event log (exit %d): %v\n%s", code, err, stderr.String())
			}
			recs := readEvents(t, logPath)
			attackOut, fin, gates := "", event.RunFinished{}, []event.GateFailed{}
			var outputs []string
			for _, r := range recs {
				switch r.Type {
				case "tool.completed":
					var tc event.ToolCompleted
					if err := r.Decode(&tc); err != nil {
						t.Fatal(err)
					}
					if len(outputs) == 1 {
						attackOut = tc.Output // the second call's
					}
					p, _ := tc.Metadata["output_path"].(string)
					outputs = append(outputs, p)
				case "gate.failed":
					var g event.GateFailed
					if err := r.Decode(&g); err != nil {
						t.Fatal(err)
					}
					gates = append(gates, g)
				case "run.finished":
					if err := r.Decode(&fin); err != nil {
						t.Fatal(err)
					}
				}
			}
			landlockOnly := pin == "off" || pin == "landlock"
			for _, c := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} { // the helper's ambient capabilities are gone
				if !strings.Contains(attackOut, c+":\t0000000000000000") {
					t.Errorf("the command has %s capabilities:\n%.600s", c, attackOut)
				}
			}
			if !strings.Contains(attackOut, "ok:out-unwritable") { // locked, or read-only under namespaces
				t.Errorf("the attack could write into the out dir:\n%.2000s", attackOut)
			}
			for _, m := range []string{"ok:tool-output-locked", "ok:out-locked", "ok:temp-locked", "ok:temp-unreadable"} {
				if strings.Contains(attackOut, m) != landlockOnly {
					t.Errorf("attack step %s worked: %v, want %v:\n%.2000s", m, !landlockOnly, landlockOnly, attackOut)
				}
			}
			if len(outputs) != 3 {
				t.Fatalf("want 3 tool.completed with a full output file, got %q\n%s", outputs, stderr.String())
			}
			for _, p := range outputs {
				full, err := os.ReadFile(p)
				if err != nil || !bytes.HasSuffix(full, []byte("\n32999\n33000\n")) {
					t.Errorf("the full output %q is not whole (%d bytes, %v)", p, len(full), err)
				}
			}
			for _, f := range []string{"result.json", "summary.md", "changes.patch", "history.jsonl"} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Errorf("%s was not written: %v", f, err)
				}
			}
			for _, d := range []string{out, filepath.Join(out, "tool-output")} {
				if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o700 != 0o700 {
					t.Errorf("%s is left with mode %v (%v)", d, fi.Mode(), err)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "runner-run-*")); len(left) > 0 {
				t.Errorf("the run's temp dir is left behind: %q", left)
			}
			var state *event.GateFailed
			for i := range gates {
				if gates[i].Gate == event.GateRunnerState {
					state = &gates[i]
				}
			}
			if !landlockOnly {
				if code != 0 || state != nil {
					t.Fatalf("under %s: exit %d, gate %+v; want a plain success\n%s", pin, code, state, stderr.String())
				}
				return
			}
			if code != 1 || state == nil || fin.Status != event.StatusViolation {
				t.Fatalf("exit %d, gates %+v, status %s; want 1, runner_state, violation\n%s", code, gates, fin.Status, stderr.String())
			}
			for _, p := range []string{out, filepath.Join(out, "tool-output")} {
				if !slices.Contains(state.Paths, p) {
					t.Errorf("the gate's paths %q do not name %s", state.Paths, p)
				}
			}
			if !slices.ContainsFunc(state.Paths, func(p string) bool { return strings.Contains(filepath.Base(p), "runner-run-") }) {
				t.Errorf("the gate's paths %q do not name the run's temp dir", state.Paths)
			}
			if !strings.Contains(state.Message, "mode") {
				t.Errorf("gate message %q", state.Message)
			}
			var res struct {
				Status event.Status `json:"status"`
			}
			if raw, err := os.ReadFile(filepath.Join(out, "result.json")); err != nil || json.Unmarshal(raw, &res) != nil || res.Status != event.StatusViolation {
				t.Errorf("result.json: %s (%v)", raw, err)
			}
		})
	}
}

func mustWriteFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies the file from to to (mode 0755) with cp(1).
//
// The copy runs in its own process for two reasons:
//   - a write descriptor held here would be inherited by any child another
//     parallel test forks meanwhile, and exec of the copy then fails with
//     ETXTBSY ("text file busy") until that child execs;
//   - a child's peak RSS counts this process's at fork time, and
//     TestFaultHugeBinaryAppend measures its runner's.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.CommandContext(t.Context(), "cp", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp %s %s: %v\n%s", from, to, err, out)
	}
	if err := os.Chmod(to, 0o755); err != nil {
		t.Fatal(err)
	}
}
