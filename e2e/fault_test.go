package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// The fault-injection suite: TestFault* run the built binary and hit it
// with signals at random moments, SIGKILL then a rerun, a full disk and a
// huge file, and check the invariants after each: the event log is valid
// JSONL ending in run.finished (after SIGKILL: valid up to its last line,
// and the rerun succeeds), the patch is written, the exit code is one of
// the documented ones, and no process or temp dir of the run is left.
//
//	go test ./e2e -run TestFault                               # a few iterations, seed 1
//	RUNNER_FAULT_ITERS=50 RUNNER_FAULT_SEED=7 go test ./e2e -run TestFault -v   # longer

// exitCodes are the runner's documented exit codes.
var exitCodes = []int{0, 1, 2, 3, 130} //nolint:gochecknoglobals // constant list

// faultIters is RUNNER_FAULT_ITERS (default def).
func faultIters(t *testing.T, def int) int {
	t.Helper()
	if v := os.Getenv("RUNNER_FAULT_ITERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("RUNNER_FAULT_ITERS=%q: want a positive number", v)
		}
		return n
	}
	return def
}

// faultRand is the suite's random source: RUNNER_FAULT_SEED (default 1)
// and the test's name, logged so a failure can be replayed.
func faultRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(1)
	if v := os.Getenv("RUNNER_FAULT_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("RUNNER_FAULT_SEED=%q: %v", v, err)
		}
		seed = s
	}
	t.Logf("RUNNER_FAULT_SEED=%d", seed)
	var h uint64
	for _, c := range t.Name() {
		h = h*31 + uint64(c)
	}
	return rand.New(rand.NewPCG(seed, h))
}

// faultSpec edits files, runs a command and has a check, so a signal can
// land in a model call, a tool, the checks or the final stages.
const faultSpec = `version: 1
name: fault
model: gpt-4.1-mini
prompt: Make status.txt say fixed.
permissions:
  read: allow
  edit:
    "**": allow
  bash:
    "sleep *": allow
checks:
  - name: status
    run: grep -q fixed status.txt
retries: 1
`

// faultTurns is the scripted model side: each reply a little late, and a
// command whose sleep's duration is token (so a leftover process can be
// found by its command line).
func faultTurns(token string) []llmtest.Reply {
	delay := func(r llmtest.Reply) llmtest.Reply { r.Delay = 80 * time.Millisecond; return r }
	return []llmtest.Reply{
		delay(llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"half\n"}`)}}.Reply()),
		delay(llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"sleep `+token+`"}`)}}.Reply()),
		delay(llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed\n"}`)}}.Reply()),
		delay(llmtest.Turn{Text: "status.txt says fixed."}.Reply()),
	}
}

// faultRun is one started runner process of the suite.
type faultRun struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
	tmp    string // the process's TMPDIR, empty again when it is gone
	token  string // in the command line of the agent's sleep
}

// startFault starts `runner exec` on a fresh small repository with the
// scripted model, out dir out, and a private TMPDIR; the agent's command
// sleeps for secs seconds and a random fraction.
func startFault(t *testing.T, r *rand.Rand, repo, spec, out string, secs int) *faultRun {
	t.Helper()
	return startFaultIn(t, r, repo, spec, out, secs, t.TempDir())
}

// startFaultIn is startFault with the TMPDIR given (a rerun in the killed
// run's, which must collect what that run left).
func startFaultIn(t *testing.T, r *rand.Rand, repo, spec, out string, secs int, tmp string) *faultRun {
	t.Helper()
	// sleep N.xxxxxxxxxxxx: unique. Not from r: the seed makes r's numbers
	// the same in every process, and the same test running at the same
	// time elsewhere on the machine (another package's binary, another
	// checkout) would have the same sleep, found as this run's process.
	token := fmt.Sprintf("%d.%012d", secs, rand.Int64N(1_000_000_000_000))
	_ = r.IntN(100_000_000) // the draw the token once took: a seed replays the moments it did
	srv := newModel(t, faultTurns(token)...)
	fr := &faultRun{stderr: &bytes.Buffer{}, done: make(chan error, 1), tmp: tmp, token: token}
	fr.cmd = exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--out", out, "--base-url", srv.URL(), "--quiet")
	fr.cmd.Dir = repo
	fr.cmd.Env = append(baseEnv(t), "OPENAI_API_KEY=sk-test-0123456789abcdef", "TMPDIR="+fr.tmp)
	fr.cmd.Stderr = fr.stderr
	if err := fr.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { fr.done <- fr.cmd.Wait() }()
	return fr
}

// sleepUntilCommand waits until the agent's command runs (its marked
// process is alive), for the moment "during a command"; false when the
// run ended first.
func (fr *faultRun) sleepUntilCommand() bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if len(markedProcesses(fr.token)) > 0 {
			return true
		}
		select {
		case err := <-fr.done: // the run ended first; put it back for wait
			fr.done <- err
			return false
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// catches reports whether process pid has a handler for sig (its
// /proc status SigCgt mask): before the Go runtime installs the runner's,
// SIGINT and SIGTERM kill it outright, as for any program.
func catches(pid int, sig syscall.Signal) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(rest), 16, 64)
			return err == nil && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}

// strike waits for the moment of iteration i, then signals: iteration 0
// hits the agent's command, the others a random time up to 2.5 s after
// the runner can catch sig (on a loaded machine a young process may not
// yet: the moment is measured from there).
func (fr *faultRun) strike(t *testing.T, i int, after time.Duration, sig syscall.Signal) {
	t.Helper()
	if sig != syscall.SIGKILL {
		for deadline := time.Now().Add(30 * time.Second); !catches(fr.cmd.Process.Pid, sig) && time.Now().Before(deadline); {
			time.Sleep(2 * time.Millisecond)
		}
	}
	if i == 0 {
		if !fr.sleepUntilCommand() {
			t.Errorf("the agent's command never ran\n%s", fr.stderr.String())
		}
	} else {
		time.Sleep(after)
	}
	_ = fr.cmd.Process.Signal(sig)
}

// lastEvents is the types of a log's last lines before run.finished, for
// the test log: where the signal landed.
func lastEvents(out string) string {
	data, _ := os.ReadFile(filepath.Join(out, "events.jsonl"))
	var types []string
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var e struct{ Type string }
		if json.Unmarshal(l, &e) == nil {
			types = append(types, e.Type)
		}
	}
	return strings.Join(types[max(0, len(types)-4):], " ")
}

// wait waits for the process (a hang guard, not a timing assertion) and
// returns its exit code.
func (fr *faultRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-fr.done:
		var exitErr *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &exitErr):
			if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return -int(ws.Signal())
			}
			return exitErr.ExitCode()
		}
		t.Fatalf("wait: %v", err)
	case <-time.After(60 * time.Second):
		_ = fr.cmd.Process.Kill()
		t.Fatalf("the runner did not exit\n%s", fr.stderr.String())
	}
	return 0
}

// checkNoLeftovers fails when a process of the run (the agent's marked
// sleep) is still alive or, with tmp, the run's TMPDIR is not empty.
// Leftovers get a moment to go: a killed process group is reaped
// asynchronously.
func checkNoLeftovers(t *testing.T, fr *faultRun, tmp bool) {
	t.Helper()
	var procs, tmps []string
	for range 150 { // up to 15 s on a loaded machine; clean runs return at once
		procs = markedProcesses(fr.token)
		if tmp {
			tmps = dirEntries(fr.tmp)
		}
		if len(procs) == 0 && len(tmps) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(procs) > 0 {
		t.Errorf("processes of the run still alive: %v", procs)
	}
	if len(tmps) > 0 {
		t.Errorf("temp files left in TMPDIR: %v", tmps)
	}
}

// markedProcesses lists the pids and command lines of live processes
// whose command line contains token.
func markedProcesses(token string) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(token)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat")); err == nil && bytes.Contains(stat, []byte(") Z ")) {
			continue // a zombie: dead, waiting to be reaped
		}
		out = append(out, d.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

func dirEntries(dir string) []string {
	ents, _ := os.ReadDir(dir)
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// checkCompleteOutDir checks the invariants of a run that ended (not
// killed): a documented exit code, and an out dir (when the run got as far
// as creating it) with a valid log ending in run.finished whose exit code
// is the process's, a patch, result.json and summary.md.
func checkCompleteOutDir(t *testing.T, out string, code int, allowed ...int) {
	t.Helper()
	if !slices.Contains(allowed, code) {
		t.Errorf("exit %d, want one of %v", code, allowed)
	}
	if _, err := os.Stat(filepath.Join(out, "events.jsonl")); errors.Is(err, os.ErrNotExist) {
		if code != 130 {
			t.Errorf("no event log, exit %d: only a signal before the out dir exists may leave none", code)
		}
		return
	}
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))
	if fin := finished(t, recs); fin.ExitCode != code {
		t.Errorf("run.finished exit_code %d, process exit %d", fin.ExitCode, code)
	}
	requireFiles(t, out, "changes.patch", "result.json", "summary.md")
}

// checkLogPrefix checks a log cut by SIGKILL: every complete line is a
// valid event (a torn last line, with no newline, is allowed).
func checkLogPrefix(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		data = nil
	}
	v, err := event.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 {
		if err := v.ValidateLog(data); err != nil {
			t.Errorf("the killed run's log is not valid up to its last line: %v", err)
		}
	}
}

// TestFaultSignals sends SIGINT or SIGTERM at a random moment of a run
// (setup, a model call, the command, the checks, the final stages): the
// run ends 130 (or 0 when it finished first) with a complete out dir.
func TestFaultSignals(t *testing.T) {
	t.Parallel()
	r := faultRand(t)
	for i := range faultIters(t, 4) {
		sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[r.IntN(2)]
		after := time.Duration(r.IntN(2500)) * time.Millisecond
		t.Run(fmt.Sprintf("%d-%s-after-%s", i, sig, moment(i, after)), func(t *testing.T) {
			spec, repo := faultRepo(t)
			out := filepath.Join(t.TempDir(), "out")
			fr := startFault(t, r, repo, spec, out, 1)
			fr.strike(t, i, after, sig)
			code := fr.wait(t)
			t.Logf("exit %d; log ends: %s", code, lastEvents(out))
			if _, err := os.Stat(out); code == -int(sig) && errors.Is(err, os.ErrNotExist) {
				// Between the runtime's start and main's signal.NotifyContext
				// a signal ends any Go program; nothing was written yet.
				t.Logf("the signal came before the runner's handler: killed by it, nothing written")
				checkNoLeftovers(t, fr, true)
				return
			}
			checkCompleteOutDir(t, out, code, 0, 130)
			checkNoLeftovers(t, fr, true)
		})
	}
}

// TestFaultSIGKILLThenRerun kills the runner with SIGKILL at a random
// moment (nothing of it runs after): its log stays valid up to its last
// line, and running the task again with the same out dir succeeds.
func TestFaultSIGKILLThenRerun(t *testing.T) {
	t.Parallel()
	r := faultRand(t)
	for i := range faultIters(t, 3) {
		after := time.Duration(r.IntN(2500)) * time.Millisecond
		t.Run(fmt.Sprintf("%d-after-%s", i, moment(i, after)), func(t *testing.T) {
			spec, repo := faultRepo(t)
			out := filepath.Join(t.TempDir(), "out")
			fr := startFault(t, r, repo, spec, out, 20) // outlives the check below unless killed with the runner
			fr.strike(t, i, after, syscall.SIGKILL)
			if code := fr.wait(t); code != -int(syscall.SIGKILL) && !slices.Contains(exitCodes, code) {
				t.Errorf("exit %d: neither killed nor a documented code", code)
			}
			t.Logf("killed; log ends: %s", lastEvents(out))
			checkLogPrefix(t, filepath.Join(out, "events.jsonl"))
			// The agent's command dies with the runner. Its temporary
			// directory cannot be removed by a killed process: it is left,
			// and the rerun in the same TMPDIR collects it (checked below).
			checkNoLeftovers(t, fr, false)
			if left := dirEntries(fr.tmp); len(left) > 0 {
				t.Logf("left in TMPDIR by the killed run: %v", left)
			}
			again := startFaultIn(t, r, repo, spec, out, 0, fr.tmp)
			code := again.wait(t)
			checkCompleteOutDir(t, out, code, 0)
			if code != 0 {
				t.Logf("rerun stderr:\n%s", again.stderr.String())
			}
			checkNoLeftovers(t, again, true)
		})
	}
}

// TestFaultBatchSIGKILLThenResume kills `batch run` of the shipped
// example (replayed offline) at a random moment; the same command again
// resumes and ends with every repository a success.
func TestFaultBatchSIGKILLThenResume(t *testing.T) {
	t.Parallel()
	r := faultRand(t)
	for i := range faultIters(t, 2) {
		after := time.Duration(r.IntN(1200)) * time.Millisecond
		t.Run(fmt.Sprintf("%d-after-%s", i, after), func(t *testing.T) {
			dir := batchExampleDir(t)
			copyDirT(t, filepath.Join(repoRoot, "examples", "batch", "cassettes"), filepath.Join(dir, "cassettes"))
			args := []string{"batch", "run", "batch.yaml", "--out", "out", "--replay", "cassettes"}
			cmd := exec.CommandContext(t.Context(), runnerBin, args...)
			cmd.Dir, cmd.Env = dir, baseEnv(t)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(after)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if data, err := os.ReadFile(filepath.Join(dir, "out", "results.jsonl")); err == nil {
				lines := bytes.Split(data, []byte("\n"))
				for _, l := range lines[:len(lines)-1] { // the last may be torn
					if !json.Valid(l) {
						t.Errorf("results.jsonl line is not JSON after SIGKILL: %s", l)
					}
				}
			}
			res := runRunner(t, dir, baseEnv(t), args...)
			if res.code != 0 {
				t.Fatalf("resume: exit %d\n%s", res.code, res.stderr)
			}
			latest := map[string]string{}
			data, err := os.ReadFile(filepath.Join(dir, "out", "results.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
				var line struct{ ID, Status string }
				if json.Unmarshal(l, &line) == nil {
					latest[line.ID] = line.Status
				}
			}
			for _, id := range batchExampleIDs {
				if latest[id] != "success" {
					t.Errorf("%s: %q after resume, want success (all: %v)", id, latest[id], latest)
				}
			}
		})
	}
}

// moment names iteration i's moment for the subtest's name.
func moment(i int, after time.Duration) string {
	if i == 0 {
		return "command"
	}
	return after.String()
}

// faultRepo is smallRepo with faultSpec.
func faultRepo(t *testing.T) (spec, repo string) {
	t.Helper()
	_, repo = smallRepo(t)
	spec = filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(faultSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec, repo
}

// tmpfsScript mounts a tmpfs of $TMPFS_SIZE on $TMPFS_DIR in a private
// mount namespace, runs its arguments there and copies what they wrote
// to $TMPFS_SAVE before the namespace (and its tmpfs) goes away.
const tmpfsScript = `set -u
mount -t tmpfs -o size="$TMPFS_SIZE" tmpfs "$TMPFS_DIR" || exit 97
"$@"
rc=$?
cp -a "$TMPFS_DIR/." "$TMPFS_SAVE/"
exit $rc
`

// needMountNamespace skips the test where unprivileged user and mount
// namespaces (unshare -rm) are missing: a full disk needs a tmpfs.
func needMountNamespace(t *testing.T) {
	t.Helper()
	if out, err := exec.CommandContext(t.Context(), "unshare", "-rm", "true").CombinedOutput(); err != nil {
		t.Skipf("no unprivileged mount namespace (unshare -rm: %v %s): a full disk needs one for its tmpfs", err, out)
	}
}

// onTmpfs is the command running the runner binary with args while dir
// is a tmpfs of size, whose content is copied to save when it ends.
func onTmpfs(t *testing.T, dir, size, save string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "unshare", append([]string{"-rm", "sh", "-c", tmpfsScript, "sh", runnerBin}, args...)...)
	cmd.Env = append(baseEnv(t), "TMPFS_SIZE="+size, "TMPFS_DIR="+dir, "TMPFS_SAVE="+save)
	return cmd
}

// tmpfsExit is the exit code of an onTmpfs command given its Run's
// error; it skips the test when the tmpfs could not be mounted.
func tmpfsExit(t *testing.T, err error, output string) int {
	t.Helper()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code == 97 {
		t.Skipf("cannot mount a tmpfs in the namespace: %s", output)
	}
	return code
}

// TestFaultDiskFull runs with the out dir on a small tmpfs while the agent
// writes a large file, in two sizes. "patch": a 300 KiB disk and a 100 KB
// file, so the log and the history (about 115 KB each) fit and the patch
// does not: the partial patch is emptied (it must not pass for the patch,
// and run.finished needs its space). "log": a 256 KiB disk and a 400 KB
// file, so the log's own event does not fit: the log is cut back to its
// last complete line. Either way the run ends with exit code 3
// (infrastructure), the log holds only complete, valid lines and ends in
// run.finished naming the full disk, and no temp dir is left. It needs
// unprivileged user and mount namespaces (unshare -rm), else it is
// skipped saying so.
func TestFaultDiskFull(t *testing.T) {
	t.Parallel()
	needMountNamespace(t)
	for _, tc := range []struct {
		name, size string
		lines      int
	}{{"patch", "300k", 5_000}, {"log", "256k", 20_000}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			save, tmp, code, output := runDiskFull(t, tc.size, tc.lines)
			if code != 3 {
				t.Errorf("exit %d, want 3 (the out dir's disk is full)", code)
			}
			if n := strings.Count(output, "no space left on device"); n == 0 {
				t.Errorf("the output does not name the full disk:\n%s", output)
			}
			seen := map[string]bool{}
			for _, line := range strings.Split(output, "\n") {
				if line != "" && seen[line] {
					t.Errorf("printed twice: %s", line)
				}
				seen[line] = true
			}
			data, err := os.ReadFile(filepath.Join(save, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(data, []byte("\n")) {
				t.Errorf("events.jsonl ends in a torn line:\n%s", data[max(0, len(data)-300):])
			}
			recs := readEvents(t, filepath.Join(save, "events.jsonl"))
			if fin := finished(t, recs); fin.ExitCode != 3 || fin.Error == nil || !strings.Contains(fin.Error.Message, "no space left") {
				t.Errorf("run.finished = %+v, want exit 3 naming the full disk", fin)
			}
			if patch, err := os.ReadFile(filepath.Join(save, "changes.patch")); err == nil && tc.name == "patch" && len(patch) != 0 {
				t.Errorf("changes.patch after a failed write: %d bytes, want empty", len(patch))
			}
			if left := dirEntries(tmp); len(left) > 0 {
				t.Errorf("temp files left in TMPDIR: %v", left)
			}
		})
	}
}

// runDiskFull runs a task whose agent writes a file of lines lines with
// the out dir on a tmpfs of size; it returns the copy of the out dir, the
// run's TMPDIR, the exit code and what it printed (stdout and stderr).
func runDiskFull(t *testing.T, size string, lines int) (save, tmp string, code int, output string) {
	t.Helper()
	spec, repo := smallRepo(t)
	big, _ := json.Marshal(map[string]string{"path": "big.txt", "content": strings.Repeat("all work and no play\n", lines)})
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", string(big))}}.Reply(),
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed\n"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply(),
	)
	out, save, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	cmd := onTmpfs(t, out, size, save, "exec", spec, "--out", out, "--base-url", srv.URL(), "--quiet")
	cmd.Dir = repo
	cmd.Env = append(cmd.Env, "OPENAI_API_KEY=sk-test-0123456789abcdef", "TMPDIR="+tmp)
	printed, err := cmd.CombinedOutput()
	code = tmpfsExit(t, err, string(printed))
	t.Logf("exit %d; output:\n%s", code, printed[:min(len(printed), 2000)])
	return save, tmp, code, string(printed)
}
