package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestFailedCheckSandboxHint: a check that fails in the sandbox with an
// output naming a network or file error carries a one-line hint
// (check.finished, stderr and summary.md) naming what the sandbox takes
// away: the network (unless sandbox.network opens it), the real $HOME,
// writes outside the work tree. A passing check, a failure whose output
// names no such cause, and a check that ran with mode off carry none.
func TestFailedCheckSandboxHint(t *testing.T) {
	if sup := sandbox.Probe(); len(sup.Available()) == 0 {
		t.Skipf("no sandbox layer on this machine: %s", sup.Missing())
	}
	const (
		netFail  = `echo 'dial tcp: lookup proxy.golang.org: no such host' >&2; exit 1`
		fileFail = `echo 'open /usr/x: Read-only file system' >&2; exit 1`
		bothFail = `echo 'dial tcp: connection refused; mkdir /home/x: permission denied' >&2; exit 1`
		testFail = `echo '--- FAIL: TestAdd: got 3, want 4' >&2; exit 1`
	)
	tests := []struct {
		name, section, run string
		want, bad          []string // in the failed check's hint; not in it (nil want: no hint)
	}{
		{"network deny", "", bothFail, []string{"checks run in the sandbox: no network (sandbox.network opens it)", "a private $HOME and $TMPDIR",
			"writes only in the work tree and sandbox.writable"}, nil},
		{"network only", "", netFail, []string{"checks run in the sandbox: no network (sandbox.network opens it)"}, []string{"$HOME"}},
		{"files only", "", fileFail, []string{"checks run in the sandbox: a private $HOME"}, []string{"network"}},
		{"test failure", "", testFail, nil, nil},
		{"network allow list", "sandbox: {network: {allow: [proxy.golang.org]}}\n", bothFail,
			[]string{"network only to proxy.golang.org (sandbox.network.allow)", "a private $HOME"}, []string{"no network"}},
		{"network allow", "sandbox: {network: allow}\n", bothFail, []string{"checks run in the sandbox: a private $HOME"}, []string{"network"}},
		{"network allow, network error", "sandbox: {network: allow}\n", netFail, nil, nil},
		{"mode off", "sandbox: {mode: off}\n", bothFail, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if sup := sandbox.Probe(); strings.Contains(tt.section, "allow: [") &&
				!slices.Contains(sup.Available(), sandbox.LayerNamespaces) && sup.LandlockABI < 4 {
				t.Skipf("an allow list needs user namespaces or Landlock ABI ≥ 4 (this kernel has %d)", sup.LandlockABI)
			}
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			repo := filepath.Join(t.TempDir(), "repo")
			mustWrite(t, filepath.Join(repo, "README"), "x\n")
			run := testRun{spec: "version: 1\nname: hint\nmodel: gpt-4.1-mini\nprompt: Do it.\npermissions: {read: allow}\nretries: 0\n" +
				"checks:\n  - {name: passes, run: 'true'}\n  - name: needs-file\n    run: " + strconv.Quote(tt.run) + "\n" + tt.section,
				repo: repo, replies: []llmtest.Reply{llmtest.Turn{Text: "Done."}.Reply()}, env: []string{"HOME=" + t.TempDir()},
				opts: func(o *ExecOptions) { o.Quiet, o.Stdout = false, &bytes.Buffer{} }}.exec(t)
			err, out, stderr := run.err, run.out, run.stderr
			if ExitCode(err) != ExitTaskFailed {
				t.Fatalf("exit %d (%v), want 1: the check fails\n%s", ExitCode(err), err, stderr)
			}
			hints := map[string]string{}
			for _, rec := range run.recs {
				var cf event.CheckFinished
				if rec.Type == "check.finished" && rec.Decode(&cf) == nil {
					hints[cf.Name] = cf.Hint
				}
			}
			if len(hints) != 2 || hints["passes"] != "" {
				t.Fatalf("check hints %q: want two checks, none on the passing one", hints)
			}
			hint := hints["needs-file"]
			if (hint != "") != (tt.want != nil) {
				t.Fatalf("failed check's hint %q, want one: %v", hint, tt.want != nil)
			}
			for _, w := range tt.want {
				if !strings.Contains(hint, w) {
					t.Errorf("hint %q lacks %q", hint, w)
				}
			}
			for _, b := range tt.bad {
				if strings.Contains(hint, b) {
					t.Errorf("hint %q says %q", hint, b)
				}
			}
			if hint != "" && !strings.Contains(stderr, "    hint: "+hint+"\n") {
				t.Errorf("stderr lacks the hint under the failed check:\n%s", stderr)
			}
			summary, _ := os.ReadFile(filepath.Join(out, "summary.md"))
			if strings.Contains(string(summary), "Hint: checks run in the sandbox: ") != (hint != "") {
				t.Errorf("summary.md says the hint: %v, want %v:\n%s", !(hint != ""), hint != "", summary)
			}
		})
	}
}
