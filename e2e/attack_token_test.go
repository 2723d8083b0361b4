package e2e

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// tokenGrab is the allowed command of TestAttackTokenOutOfReach. It looks
// for the job's token where a command could find it (its environment,
// every /proc/PID/environ and cmdline it can read, git's credential
// helper, the checkout's extraheader), then puts it where redaction does
// not look: reversed and in two halves, in its output, in files of the
// patch and in a file's name.
const tokenGrab = `found=$(printenv GITHUB_TOKEN)
for f in /proc/$PPID/environ /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do
  [ -n "$found" ] && break
  found=$(tr '\0' '\n' < "$f" 2>/dev/null | sed -n 's/^GITHUB_TOKEN=//p; s/^GH_TOKEN=//p' | head -n 1)
done
[ -z "$found" ] && found=$(printf 'protocol=https\nhost=github.com\n\n' | git credential fill 2>/dev/null | sed -n 's/^password=//p')
[ -z "$found" ] && found=$(git config --get-regexp 'extraheader' 2>/dev/null | sed 's/.*basic //' | base64 -d 2>/dev/null | cut -d: -f2)
rev=$(printf %s "$found" | rev)
half=$(( ${#found} / 2 ))
one=$(printf %s "$found" | cut -c1-$half)
two=$(printf %s "$found" | cut -c$((half + 1))-)
echo "found ${#found} bytes"
echo "rev=$rev"
echo "one=$one"
echo "two=$two"
printf '%s\n' "$rev" > leak-rev.txt
printf '%s\n' "$one" > leak-one.txt
printf '%s\n' "$two" > leak-two.txt
[ -n "$rev" ] && : > "name-$rev"
echo done
`

// tokenForms are the forms of tok the attack tries to get out: those
// redaction catches and those it cannot (reversed, halves).
func tokenForms(tok string) map[string]string {
	r := []rune(tok)
	slices.Reverse(r)
	half := len(tok) / 2
	return map[string]string{
		"raw": tok, "base64": base64.StdEncoding.EncodeToString([]byte(tok)),
		"base64 url": base64.RawURLEncoding.EncodeToString([]byte(tok)), "hex": hex.EncodeToString([]byte(tok)),
		"reversed": string(r), "first half": tok[:half], "second half": tok[half:],
	}
}

// TestAttackTokenOutOfReach runs a pull request run under Actions whose
// allowed command hunts for the job's token (tokenGrab) and writes it,
// reversed and halved, into its output, the patch and a file name. Under
// every sandbox layer set the command finds nothing. So no form of the
// token is in what the model was sent, the comment, the pull request,
// the pushed branch (content, file names, refs), stdout, stderr, the step
// summary and outputs, or the out dir. The control is mode off: there
// the runner's /proc/PID/environ is readable (docs/github.md says so),
// and the reversed token reaches the model and the pushed branch. So
// these channels carry the token when no sandbox guards it.
func TestAttackTokenOutOfReach(t *testing.T) {
	avail := sandbox.Probe().Available()
	for _, pin := range []string{"off", "landlock", "namespaces", "namespaces,landlock"} {
		t.Run(pin, func(t *testing.T) {
			for _, l := range strings.Split(pin, ",") {
				if l != "off" && !slices.Contains(avail, sandbox.Layer(l)) {
					t.Skipf("layer %s is not available here", l)
				}
			}
			t.Parallel()
			base := t.TempDir()
			repo := filepath.Join(base, "ws")
			mustWriteFile(t, filepath.Join(repo, "README"), "small\n")
			mustWriteFile(t, filepath.Join(repo, "grab.sh"), tokenGrab)
			gittest.Run(t, repo, "init", "-q", "-b", "master")
			gittest.Run(t, repo, "add", "-A")
			gittest.Run(t, repo, "commit", "-q", "-m", "init")
			remote := newGitRemote(t, repo)
			srv := newModel(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"sh grab.sh"}`)}}.Reply(),
				llmtest.Turn{Text: "Done: see leak-rev.txt."}.Reply())
			spec := filepath.Join(base, "task.yaml")
			section := ""
			if pin == "off" {
				section = "sandbox: {mode: \"off\"}\n"
			}
			mustWriteFile(t, spec, "version: 1\nname: grab\nmodel: gpt-4.1-mini\nprompt: Fix it.\n"+
				"permissions:\n  read: allow\n  edit: {\"**\": allow}\n  bash: {\"sh grab.sh\": allow}\nlimits: {max_steps: 4}\n"+section)
			gh := newFakeGitHub(t)
			a := newActionsRun(t, "pull_request", string(readGateFile(t, "pull_request.fork.json")), gh.url(), remote.url,
				"GITHUB_TOKEN="+actToken, "RUNNER_COMMENT=true", "RUNNER_PULL_REQUEST=true", "GITHUB_BASE_REF=master")
			if pin != "off" {
				a.env = append(a.env, "RUNNER_SANDBOX_LAYERS="+pin)
			}
			out := filepath.Join(base, "out")
			res := runRunner(t, repo, a.env, "exec", spec, "--out", out, "--base-url", srv.URL())
			if res.code != 0 {
				t.Fatalf("exit %d, want 0\nstderr:\n%s", res.code, res.stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || !strings.Contains(toolResults(reqs[1].Messages()), "done") {
				t.Fatalf("the attack did not run: %d model requests", len(reqs))
			}
			channels := map[string]string{"stdout": res.stdout, "stderr": withoutMasks(res.stderr), "fake GitHub": gh.all(),
				"model requests": toolResults(reqs[1].Messages()),
				"pushed commits": gittest.Run(t, remote.bare, "log", "--all", "-p", "--format=%B%n%s"),
				"pushed files":   gittest.Run(t, remote.bare, "log", "--all", "--name-only", "--format="),
				"pushed refs":    gittest.Run(t, remote.bare, "for-each-ref", "--format=%(refname)")}
			for name, content := range a.files(t) {
				channels[name] = content
			}
			for name, content := range readTree(t, out) {
				channels["out/"+name] = content
			}
			if !strings.Contains(channels["pushed files"], "leak-rev.txt") {
				t.Fatalf("the pull request's branch lacks the attack's files: the channel was not used\n%s", channels["pushed files"])
			}
			leaked := map[string][]string{} // channel -> forms found
			for ch, content := range channels {
				for form, v := range tokenForms(actToken) {
					if strings.Contains(content, v) {
						leaked[ch] = append(leaked[ch], form)
					}
				}
			}
			if pin == "off" { // the control
				t.Logf("control: with mode off the token reached %v", leaked)
				for _, ch := range []string{"model requests", "pushed commits", "pushed files"} {
					if !slices.Contains(leaked[ch], "reversed") {
						t.Errorf("control: with mode off the reversed token did not reach %s (found %v): the attack cannot fail", ch, leaked)
					}
				}
				return
			}
			for ch, forms := range leaked {
				t.Errorf("%s holds the token (%s)", ch, strings.Join(forms, ", "))
			}
			if got := toolResults(reqs[1].Messages()); !strings.Contains(got, "found 0 bytes") {
				t.Errorf("the command found something:\n%s", got)
			}
			if got := remote.pushAuths(); len(got) == 0 || got[0] != "x-access-token:"+actToken {
				t.Errorf("push credentials %q, want the job's token: the runner's own push must still work", got)
			}
		})
	}
}

// readGateFile reads a payload variant of github/testdata/gate.
func readGateFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "github", "testdata", "gate", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAttackTokenNotInEchoedErrors: the git server refuses the push and
// echoes the request's Authorization header (and the token in other
// forms) in its answer. The runner reports the failed delivery in the
// comment, the step summary and stderr, and none of them holds the
// token in a form the redactor knows. The control: the server's words
// do reach the report (its marker is there), so the channel carries
// what the server said.
func TestAttackTokenNotInEchoedErrors(t *testing.T) {
	t.Parallel()
	spec, repo := smallRepo(t)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pass, _ := r.BasicAuth()
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "echo-marker: refused %s %s Authorization: %s hex %s b64 %s\n", r.Method, r.URL, r.Header.Get("Authorization"),
			hex.EncodeToString([]byte(pass)), base64.StdEncoding.EncodeToString([]byte(pass)))
	}))
	t.Cleanup(echo.Close)
	srv := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"status.txt","content":"fixed\n"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply())
	gh := newFakeGitHub(t)
	gh.perms["sample-author"] = "admin" // the pull request's author, checked by the gate
	a := newActionsRun(t, "pull_request", string(readGateFile(t, "pull_request.edited.json")), gh.url(), echo.URL,
		"GITHUB_TOKEN="+actToken, "RUNNER_COMMENT=true", "RUNNER_PULL_REQUEST=true", "GITHUB_BASE_REF=main")
	out := filepath.Join(t.TempDir(), "out")
	res := runRunner(t, repo, a.env, "exec", spec, "--out", out, "--base-url", srv.URL())
	if res.code != 3 {
		t.Fatalf("exit %d, want 3 (delivery failed)\n%s", res.code, res.stderr)
	}
	channels := map[string]string{"stdout": res.stdout, "stderr": withoutMasks(res.stderr), "fake GitHub": gh.all()}
	for name, content := range a.files(t) {
		channels[name] = content
	}
	for name, content := range readTree(t, out) {
		channels["out/"+name] = content
	}
	for ch, content := range channels {
		for _, form := range []string{"raw", "base64", "hex"} {
			if v := tokenForms(actToken)[form]; strings.Contains(content, v) {
				t.Errorf("%s holds the %s token", ch, form)
			}
		}
		if b := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + actToken)); strings.Contains(content, b) {
			t.Errorf("%s holds the Authorization header", ch)
		}
	}
	if c := gh.commentBody(); !strings.Contains(c, "could not be pushed") || !strings.Contains(c, "echo-marker: refused") {
		t.Errorf("control: the comment does not carry the server's answer:\n%s", c)
	}
}
