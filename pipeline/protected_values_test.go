package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// midrunSpec lets the agent run make targets; a check prints the copy.
const midrunSpec = `version: 1
name: midrun
model: gpt-4.1-mini
prompt: Build.
permissions:
  read: allow
  bash: {"make *": allow}
limits: {max_steps: 5}
checks:
  - {name: show, run: make show}
`

// Secrets of the mid-run attack: a token a setup command writes into a
// new protected .env.local, and the password of the committed .env's
// DATABASE_URL (percent-encoded there: p%40ss… is p@ss…).
const (
	midrunToken  = "midrun-token-5be0c2d9a1"
	midrunPwEnc  = "db%40pass-77f3c1e0"
	midrunPwDec  = "db@pass-77f3c1e0"
	midrunDBURL  = "postgres://app:" + midrunPwEnc + "@db.internal:5432/app"
	midrunDotenv = "DATABASE_URL=" + midrunDBURL + "\n"
)

// midrunMakefile: setup writes the protected .env.local (a setup script
// writing secrets into place) and prints the token in the same command,
// keeping a copy in the ignored build/ (out of the covers' reach: it is
// not a protected name); show prints the copy, and the committed .env's
// password alone, read through git objects (raw and decoded, as a
// driver's config dump or urlparse would). Each prints to the tool
// result and tees into build/ so the test sees the values were real.
const midrunMakefile = `setup:
	@mkdir -p build
	@t=` + midrunToken + `; printf 'API_TOKEN=%s\n' $$t > .env.local; echo "setup: $$t" | tee build/setup.out; echo $$t > build/copy.txt
show:
	@echo "copy: $$(cat build/copy.txt)" | tee build/show.out
	@echo "password: $$(git show HEAD:.env | sed -n 's|.*://[^:]*:\([^@]*\)@.*|\1|p')" | tee -a build/show.out
	@echo "decoded: $$(git show HEAD:.env | sed -n 's|.*://[^:]*:\([^@]*\)@.*|\1|p' | sed 's/%40/@/g')" | tee -a build/show.out
`

// TestRedactProtectedValuesMidRun runs the attack for real under every
// layer pinned and with the sandbox off: a command writes a protected
// .env.local and prints its token in the same output; a later command
// and a check print a copy of it from a file no cover hides, and the
// password of the committed .env's DATABASE_URL alone (raw and
// percent-decoded) from git objects. The commands really printed the
// values (their tee'd copies hold them: the control that the attack
// works, sandboxed or not), yet neither the model's tool results nor the
// event log holds any of them: the token joined the redactors when the
// command that wrote it returned, before its own output was redacted,
// and a URL's password is redacted alone too.
func TestRedactProtectedValuesMidRun(t *testing.T) {
	requireTool(t, "make")
	for _, pin := range attackPins() {
		t.Run(pin, func(t *testing.T) {
			requirePin(t, pin)
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			repo := gittest.Repo(t, map[string]string{"Makefile": midrunMakefile, ".env": midrunDotenv, ".gitignore": "build/\n.env.local\n"})
			spec := filepath.Join(t.TempDir(), "task.yaml")
			section := ""
			env := []string{"PATH=" + os.Getenv("PATH")}
			if pin == "off" {
				section = "sandbox: {mode: off}\n"
			} else {
				env = append(env, sandbox.LayersEnv+"="+pin)
			}
			mustWrite(t, spec, midrunSpec+section)
			call := func(cmd string) llmtest.Reply {
				return llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"`+cmd+`"}`)}}.Reply()
			}
			srv := newModel(t, call("make setup"), call("make show"), llmtest.Turn{Text: "Built."}.Reply())
			out := t.TempDir()
			var stderr bytes.Buffer
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
				APIKey: testKey, Stderr: &stderr, Environ: env})
			raw := readOrNil(filepath.Join(repo, "build", "setup.out"))
			raw = append(raw, readOrNil(filepath.Join(repo, "build", "show.out"))...)
			for _, v := range []string{midrunToken, midrunPwEnc, midrunPwDec} {
				if !bytes.Contains(raw, []byte(v)) {
					t.Fatalf("the commands did not print %s (the attack did not work): %q (%v)\n%s", v, raw, err, stderr.String())
				}
			}
			res := attackResult{srv: srv}
			sent := res.toolResults()
			logData, rerr := os.ReadFile(filepath.Join(out, "events.jsonl"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			recs := validLog(t, logData)
			for _, m := range []string{"setup: ", "copy: ", "password: ", "decoded: "} {
				if !strings.Contains(sent, m+event.Redacted) {
					t.Errorf("the model was not sent %q[REDACTED]:\n%s", m, sent)
				}
			}
			var check string
			for _, r := range recs {
				if r.Type == "check.finished" {
					var cf event.CheckFinished
					if err := r.Decode(&cf); err != nil {
						t.Fatal(err)
					}
					check = cf.Output
				}
			}
			if !strings.Contains(check, "copy: "+event.Redacted) {
				t.Errorf("the check's event does not show the copy redacted: %q", check)
			}
			for _, v := range []string{midrunToken, midrunPwEnc, midrunPwDec} {
				if strings.Contains(sent, v) {
					t.Errorf("%s reached the model in a tool result:\n%s", v, sent)
				}
				if bytes.Contains(logData, []byte(v)) {
					t.Errorf("%s is in the event log", v)
				}
			}
		})
	}
}
