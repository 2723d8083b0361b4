package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// hugeGitSize is the size of each sparse file the attack makes: 1 GiB,
// no disk.
const hugeGitSize = 1 << 30

// hugeGitAttack makes sparse 1 GiB files where the runner reads git's
// small files outside the sandbox, after each command: a nested
// repository's HEAD and commondir, a nested gitfile, a .gitignore, and
// (where .git is writable) info/exclude.
const hugeGitAttack = `set -e
git init -q head && echo x > head/f.txt && truncate -s 1G head/.git/HEAD
git init -q common && echo x > common/f.txt && truncate -s 1G common/.git/commondir
mkdir -p gitfile deep/er && echo x > gitfile/f.txt && truncate -s 1G gitfile/.git
truncate -s 1G deep/.gitignore && echo x > deep/er/f.txt
truncate -s 1G .git/info/exclude 2>/dev/null || true
echo done
`

// TestAttackHugeGitFiles: sparse 1 GiB files where the runner reads a
// nested repository's HEAD, commondir and gitfile, a .gitignore and
// info/exclude do not make the runner read them whole: its peak memory
// stays below half of one file, under each layer set and with the
// sandbox off. Before, a 2 GiB HEAD took the runner to 8.8 GB.
func TestAttackHugeGitFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("sparse 1 GiB files")
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
			repo := filepath.Join(base, "repo")
			gittest.Init(t, repo, map[string]string{"attack.sh": hugeGitAttack})
			srv := newModel(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"bash attack.sh"}`)}}.Reply(),
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"bash -c true"}`)}}.Reply(),
				llmtest.Turn{Text: "Done."}.Reply())
			spec := filepath.Join(base, "task.yaml")
			section := ""
			if pin == "off" {
				section = "sandbox: {mode: \"off\"}\n"
			}
			mustWriteFile(t, spec, "version: 1\nname: huge-git\nmodel: gpt-4.1-mini\nprompt: Do it.\n"+
				"permissions:\n  read: allow\n  edit: {\"**\": allow}\n  bash: {\"bash attack.sh\": allow, \"bash -c true\": allow}\nlimits: {max_steps: 4}\n"+section)
			cmd := exec.CommandContext(t.Context(), runnerBin, "exec", spec, "--out", filepath.Join(base, "out"), "--base-url", srv.URL(), "--quiet")
			cmd.Dir, cmd.Env = repo, append(baseEnv(t), "OPENAI_API_KEY=x")
			if pin != "off" {
				cmd.Env = append(cmd.Env, "RUNNER_SANDBOX_LAYERS="+pin)
			}
			measureRSS(t, cmd)
			out, _ := cmd.CombinedOutput()
			peak := peakRSS(t, cmd)
			t.Logf("runner peak RSS %.1f MiB", float64(peak)/(1<<20))
			reqs := srv.Requests()
			if len(reqs) < 2 || !strings.Contains(toolResults(reqs[1].Messages()), "done") {
				t.Fatalf("the attack did not run:\n%s", out)
			}
			if fi, err := os.Stat(filepath.Join(repo, "head", ".git", "HEAD")); err != nil || fi.Size() != hugeGitSize {
				t.Fatalf("the sparse HEAD is not there: %v", err)
			}
			if peak <= 0 || peak >= hugeGitSize/2 {
				t.Errorf("runner peak RSS %d bytes, want below half of one planted file (%d)\n%s", peak, hugeGitSize/2, out)
			}
		})
	}
}
