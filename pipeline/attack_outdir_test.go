package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// outDirSpec allows the two commands of the attack and runs a check that
// tampers too.
const outDirSpec = `version: 1
name: outdir
model: gpt-4.1-mini
prompt: Build.
permissions:
  read: allow
  bash: {"seq *": allow, "bash attack.sh": allow}
limits: {max_steps: 5}
checks:
  - name: tamper
    run: bash check.sh
`

// outDirAttack is what the agent's second command runs (real bash) on
// the run's own out dir, .runner/runs/cur: the log truncated, deleted
// and replaced by a forged one that claims success, the history emptied,
// bash's kept full output deleted, a file and a directory planted, and a
// leftover (setsid) that goes on appending to the log. Each step prints
// a marker when it succeeded.
const outDirAttack = `d=.runner/runs/cur
truncate -s 10 $d/events.jsonl && echo ok:truncated-log
rm -f $d/events.jsonl && echo ok:deleted-log
printf '%s\n' '{"v":1,"seq":1,"time":"2026-01-01T00:00:00Z","run_id":"forged","type":"step.started","step":1}' > $d/events.jsonl && echo ok:replaced-log
: > $d/history.jsonl && echo ok:emptied-history
rm $d/tool-output/*.log && echo ok:deleted-output
echo planted > $d/planted.txt && echo ok:planted-file
mkdir $d/planted-dir && echo x > $d/planted-dir/f && echo ok:planted-dir
setsid bash -c "while :; do echo late >> $d/events.jsonl; sleep 0.02; done" </dev/null >/dev/null 2>&1 &
sleep 0.2
exit 0
`

// outDirCheck is the check: it appends a forged line to the log.
const outDirCheck = `echo '{"forged-by":"check"}' >> .runner/runs/cur/events.jsonl 2>/dev/null && echo check-appended
exit 0
`

// TestExecOutDirAttackPerLayer runs the attack on the run's OWN out dir
// for real: the agent's first command prints 108,894 bytes (its full
// output kept under tool-output/), the second runs outDirAttack, the
// check outDirCheck. Under Landlock only (which cannot make the out dir
// inside the work tree read-only), and with the sandbox off as the
// control, every write succeeds, and after the
// last command the runner puts back every byte it wrote, removes what it
// did not and fails the run with gate runner_state naming the paths
// (status violation, exit 1). Under namespaces, alone or with Landlock,
// the out dir is read-only to the commands: every write fails and the run
// succeeds. Either way the final events.jsonl is the runner's whole
// record (gapless seq, run.started to run.finished, no forged byte),
// history.jsonl matches its digest in run.finished and the full output
// is whole.
func TestExecOutDirAttackPerLayer(t *testing.T) {
	pins := layerPins()
	pins["off"] = nil // the control: sandbox.mode off, no layer
	for pin, layers := range pins {
		landlockOnly := !slices.Contains(layers, sandbox.LayerNamespaces)
		t.Run(pin, func(t *testing.T) {
			sup := sandbox.Probe()
			for _, l := range layers {
				if !slices.Contains(sup.Available(), l) {
					t.Skipf("layer %s is not available here: %s", l, sup.Missing())
				}
			}
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			repo := gittest.Repo(t, map[string]string{"attack.sh": outDirAttack, "check.sh": outDirCheck, ".gitignore": ".runner/\n"})
			spec := filepath.Join(t.TempDir(), "task.yaml")
			env := []string{"PATH=" + os.Getenv("PATH"), sandbox.LayersEnv + "=" + pin}
			if layers == nil {
				mustWrite(t, spec, outDirSpec+"sandbox: {mode: \"off\"}\n")
				env = env[:1]
			} else {
				mustWrite(t, spec, outDirSpec)
			}
			srv := newModel(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"seq 1 20000"}`)}}.Reply(),
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"bash attack.sh"}`)}}.Reply(),
				llmtest.Turn{Text: "Built."}.Reply())
			out := filepath.Join(repo, ".runner", "runs", "cur")
			var stderr bytes.Buffer
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
				APIKey: testKey, Stderr: &stderr, Environ: env})
			data, rerr := os.ReadFile(filepath.Join(out, "events.jsonl"))
			if rerr != nil {
				t.Fatalf("%v\n%s", rerr, stderr.String())
			}
			recs := wholeRecord(t, data)
			gates, fin := gatesOf(t, recs)
			attackOut := toolOutput(t, recs, 2)
			marks := []string{"ok:truncated-log", "ok:deleted-log", "ok:replaced-log", "ok:emptied-history", "ok:deleted-output", "ok:planted-file", "ok:planted-dir"}
			for _, m := range marks {
				if strings.Contains(attackOut, m) != landlockOnly {
					t.Errorf("attack step %s succeeded: %v, want %v (only Landlock only leaves the out dir writable):\n%s", m, !landlockOnly, landlockOnly, attackOut)
				}
			}
			fullPath := outputPath(t, recs, 1)
			if full, err := os.ReadFile(fullPath); err != nil || len(full) != 108894 || !bytes.HasSuffix(full, []byte("\n19999\n20000\n")) {
				t.Errorf("the full output %s is not whole (%d bytes, %v)", fullPath, len(full), err)
			}
			checkHistoryDigest(t, out, fin)
			for _, p := range []string{"planted.txt", "planted-dir"} {
				if _, err := os.Lstat(filepath.Join(out, p)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s is still in the out dir: %v", p, err)
				}
			}
			var state *event.GateFailed
			for i := range gates {
				if gates[i].Gate == event.GateRunnerState {
					state = &gates[i]
				}
			}
			if !landlockOnly {
				if state != nil || err != nil || fin.Status != event.StatusSuccess {
					t.Fatalf("under %s: gate %+v, status %s, err %v; want a plain success (the out dir is read-only)", pin, state, fin.Status, err)
				}
				if !strings.Contains(attackOut, "Read-only file system") {
					t.Errorf("the attack's writes did not fail as read-only:\n%s", attackOut)
				}
				return
			}
			if state == nil || fin.Status != event.StatusViolation || ExitCode(err) != ExitTaskFailed {
				t.Fatalf("gates %+v, status %s, exit %d (%v): want runner_state, violation, exit 1", gates, fin.Status, ExitCode(err), err)
			}
			rel, _ := filepath.Rel(repo, fullPath)
			for _, p := range []string{".runner/runs/cur/events.jsonl", ".runner/runs/cur/history.jsonl", ".runner/runs/cur/planted.txt",
				".runner/runs/cur/planted-dir", filepath.ToSlash(rel)} {
				if !slices.Contains(state.Paths, p) {
					t.Errorf("the gate's paths %q do not name %s", state.Paths, p)
				}
			}
			if !strings.Contains(state.Message, "this run's own record") || !strings.Contains(fin.Error.Message, "put back") {
				t.Errorf("gate message %q, run error %+v", state.Message, fin.Error)
			}
			var res struct {
				Status event.Status `json:"status"`
				Exit   int          `json:"exit_code"`
			}
			raw, _ := os.ReadFile(filepath.Join(out, "result.json"))
			if err := json.Unmarshal(raw, &res); err != nil || res.Status != event.StatusViolation || res.Exit != ExitTaskFailed {
				t.Errorf("result.json = %s (%v)", raw, err)
			}
		})
	}
}

// wholeRecord checks that data is the runner's complete log: schema
// valid, seq 1…n without a gap, run.started first, run.finished last, one
// run id, no forged byte; it returns the records.
func wholeRecord(t *testing.T, data []byte) []event.Record {
	t.Helper()
	for _, forged := range []string{`"run_id":"forged"`, `"forged-by"`, "late\n"} {
		if bytes.Contains(data, []byte(forged)) {
			t.Errorf("the log holds %q", forged)
		}
	}
	recs := validLog(t, data)
	for i, r := range recs {
		if r.Seq != int64(i+1) || r.RunID != recs[0].RunID {
			t.Fatalf("line %d: seq %d run %s, want seq %d run %s", r.Line, r.Seq, r.RunID, i+1, recs[0].RunID)
		}
	}
	if recs[0].Type != "run.started" || recs[len(recs)-1].Type != "run.finished" {
		t.Fatalf("the log runs from %s to %s", recs[0].Type, recs[len(recs)-1].Type)
	}
	for _, typ := range []string{"tool.completed", "check.finished", "patch"} {
		if !slices.ContainsFunc(recs, func(r event.Record) bool { return r.Type == typ }) {
			t.Errorf("the log has no %s", typ)
		}
	}
	return recs
}

// toolOutput is the output of the n-th tool.completed (1-based).
func toolOutput(t *testing.T, recs []event.Record, n int) string {
	t.Helper()
	return nthToolCompleted(t, recs, n).Output
}

// outputPath is the kept full output of the n-th tool.completed.
func outputPath(t *testing.T, recs []event.Record, n int) string {
	t.Helper()
	tc := nthToolCompleted(t, recs, n)
	p, _ := tc.Metadata["output_path"].(string)
	if p == "" {
		t.Fatalf("tool call %d kept no full output: %+v", n, tc.Metadata)
	}
	return p
}

func nthToolCompleted(t *testing.T, recs []event.Record, n int) event.ToolCompleted {
	t.Helper()
	for _, r := range recs {
		if r.Type != "tool.completed" {
			continue
		}
		if n--; n == 0 {
			var tc event.ToolCompleted
			if err := r.Decode(&tc); err != nil {
				t.Fatal(err)
			}
			return tc
		}
	}
	var types []string
	for _, r := range recs {
		types = append(types, r.Type)
		if r.Type == "tool.failed" {
			types = append(types, string(r.Raw))
		}
	}
	t.Fatalf("too few tool.completed in %v", types)
	return event.ToolCompleted{}
}

// checkHistoryDigest: the out dir's history.jsonl is what run.finished's
// digest says (so --continue takes it).
func checkHistoryDigest(t *testing.T, out string, fin event.RunFinished) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "history.jsonl"))
	sum := sha256.Sum256(data)
	if err != nil || fin.History == nil || fin.History.SHA256 != hex.EncodeToString(sum[:]) || fin.History.Size != int64(len(data)) {
		t.Errorf("history.jsonl (%d bytes, %v) does not match run.finished's digest %+v", len(data), err, fin.History)
	}
}
