package e2e

import (
	"errors"
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

// sparseAttack makes sparse 1 TiB files (no disk) where the runner's
// repairs read after the run, outside the sandbox: an earlier run's
// record under .runner (read-only with namespaces), a submodule's files,
// and a .gitignore above a changed file.
const sparseAttack = `truncate -s 1T .runner/runs/old/big 2>/dev/null
truncate -s 1T sub/big && mkdir -p deep/er && truncate -s 1T deep/.gitignore && echo x > deep/er/f.txt
echo done
`

// TestAttackSparseFiles: a command's sparse terabyte files where the
// runner's gates read do not crash the runner. Before, the state and
// submodule gates read each file whole: "fatal error: runtime: out of
// memory", exit 2, no run.finished, git credentials never put back.
// Now the run ends with exit 1 and a gate naming what changed, and the
// runner's peak memory stays below 512 MiB, under each layer set and
// with the sandbox off.
func TestAttackSparseFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("sparse 1 TiB files")
	}
	avail := runnerLayers(t)
	for _, pin := range []string{"off", "landlock", "namespaces,landlock"} {
		t.Run(pin, func(t *testing.T) {
			for _, l := range strings.Split(pin, ",") {
				if l != "off" && !slices.Contains(avail, l) {
					t.Skipf("layer %s is not available here", l)
				}
			}
			base := t.TempDir()
			src, repo := filepath.Join(base, "src"), filepath.Join(base, "repo")
			gittest.Init(t, src, map[string]string{"lib.txt": "lib\n"})
			gittest.Init(t, repo, map[string]string{"attack.sh": sparseAttack, ".gitignore": ".runner/\n"})
			gittest.Run(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub")
			gittest.Run(t, repo, "commit", "-qm", "submodule")
			mustWriteFile(t, filepath.Join(repo, ".runner", "runs", "old", "result.json"), `{"status":"success"}`+"\n")
			srv := newModel(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"bash attack.sh"}`)}}.Reply(),
				llmtest.Turn{Text: "Done."}.Reply())
			spec := filepath.Join(base, "task.yaml")
			section := ""
			if pin == "off" {
				section = "sandbox: {mode: \"off\"}\n"
			}
			mustWriteFile(t, spec, "version: 1\nname: sparse\nmodel: gpt-4.1-mini\nprompt: Do it.\n"+
				"permissions:\n  read: allow\n  edit: {\"**\": allow}\n  bash: {\"bash attack.sh\": allow}\nlimits: {max_steps: 4}\n"+section)
			out := filepath.Join(base, "out")
			cmd := exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--out", out, "--base-url", srv.URL(), "--quiet")
			cmd.Dir, cmd.Env = repo, append(baseEnv(t), "OPENAI_API_KEY=x")
			if pin != "off" {
				cmd.Env = append(cmd.Env, "RUNNER_SANDBOX_LAYERS="+pin)
			}
			measureRSS(t, cmd)
			stdout, err := cmd.CombinedOutput()
			peak := peakRSS(t, cmd)
			t.Logf("runner peak RSS %.1f MiB", float64(peak)/(1<<20))
			if fi, serr := os.Stat(filepath.Join(repo, "sub", "big")); serr != nil || fi.Size() != 1<<40 {
				t.Fatalf("the attack made no sparse file: %v\n%s", serr, stdout)
			}
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
				t.Fatalf("runner: %v, want exit 1 (violation)\n%.3000s", err, stdout)
			}
			gates := ofType[event.GateFailed](t, readEvents(t, filepath.Join(out, "events.jsonl")))
			if !slices.ContainsFunc(gates, func(g event.GateFailed) bool { return g.Gate == event.GateSubmodule }) {
				t.Errorf("no submodules gate in %+v", gates)
			}
			state := slices.ContainsFunc(gates, func(g event.GateFailed) bool {
				return g.Gate == event.GateRunnerState && slices.Contains(g.Paths, ".runner/runs/old/big")
			})
			if !strings.Contains(pin, "namespaces") && !state { // with namespaces .runner is read-only
				t.Errorf("no runner_state gate names .runner/runs/old/big: %+v", gates)
			}
			if peak <= 0 || peak >= 512<<20 {
				t.Errorf("runner peak RSS %d bytes, want below 512 MiB", peak)
			}
		})
	}
}
