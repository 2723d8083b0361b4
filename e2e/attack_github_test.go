package e2e

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

// gitCredsAttack is the allowed command that prints what actions/checkout
// left for git: .git/config, the file it includes, git's view of both.
const gitCredsAttack = `echo "=== config"; cat .git/config
echo "=== include"; cat %s
echo "=== git"; git config --list --show-origin
echo "=== end"
`

// TestAttackGitCredentialsOutOfReach plays issue 30's first attack under
// each sandbox layer set and mode off. actions/checkout left the job's
// token in .git/config (http.extraheader, base64 of x-access-token:TOKEN)
// and a second token in a file the config includes (checkout v6 keeps it
// in $RUNNER_TEMP), plus a credential helper. An allowed command prints
// them all; the model then repeats the tokens in the forms tools produce
// (the header's base64, base64 at other offsets and in the URL alphabet,
// hex, percent-encoding).
//
// The model's tool result holds a .git/config without the credentials
// (under every layer set; the included file is hidden by the sandbox, and
// with mode off run.started says it is not); no channel holds a token in
// any of those forms: the fake GitHub (comment, pull request), the pushed
// branch and commit, stdout, stderr, the step summary and outputs, the
// out dir. The runner's own push still authenticated with the job's
// token, and .git/config is whole again after the run.
func TestAttackGitCredentialsOutOfReach(t *testing.T) {
	const (
		tok2 = "ghs_included0123456789abcdefghijklmn"
	)
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
			repo, inc := filepath.Join(base, "ws"), filepath.Join(base, "runner-temp", "git-credentials-5e1f.config")
			mustWriteFile(t, filepath.Join(repo, "README"), "small\n")
			mustWriteFile(t, filepath.Join(repo, "attack.sh"), fmt.Sprintf(gitCredsAttack, inc))
			gittest.Run(t, repo, "init", "-q", "-b", "master")
			gittest.Run(t, repo, "add", "-A")
			gittest.Run(t, repo, "commit", "-q", "-m", "init")
			remote := newGitRemote(t, repo)
			header := func(tok string) string {
				return "AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+tok))
			}
			mustWriteFile(t, inc, "[http \"https://github.com/\"]\n\textraheader = "+header(tok2)+"\n")
			cfgPath := filepath.Join(repo, ".git", "config")
			cfg, err := os.ReadFile(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			original := string(cfg) + "[http \"https://github.com/\"]\n\textraheader = " + header(actToken) + "\n" +
				"[credential]\n\thelper = store\n" +
				"[includeIf \"gitdir:" + repo + "/.git/\"]\n\tpath = " + inc + "\n"
			mustWriteFile(t, cfgPath, original)

			// What the model repeats: each token in the forms tools print.
			repeated := map[string]string{
				"header base64":              base64.StdEncoding.EncodeToString([]byte("x-access-token:" + actToken)),
				"user:V base64":              base64.StdEncoding.EncodeToString([]byte("user:" + tok2)),
				"u:V base64 url":             base64.RawURLEncoding.EncodeToString([]byte("u:" + actToken)),
				"ab:V base64 in a longer":    base64.StdEncoding.EncodeToString([]byte(`{"auth":"ab:` + tok2 + `","x":1}`)),
				"hex":                        hex.EncodeToString([]byte(actToken)),
				"percent":                    percentAll(tok2),
				"raw token":                  actToken,
				"raw included token":         tok2,
				"Bearer":                     "Bearer " + tok2,
				"AUTHORIZATION: basic V b64": header(tok2),
			}
			var final strings.Builder
			final.WriteString("Done. For the record:\n")
			for _, v := range repeated {
				final.WriteString(v + "\n")
			}
			srv := newModel(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"bash attack.sh"}`)}}.Reply(),
				llmtest.Turn{Text: "Token: " + repeated["header base64"],
					ToolCalls: []llmtest.ToolCall{llmtest.Call("write", `{"path":"hello.txt","content":"hello\n"}`)}}.Reply(),
				llmtest.Turn{Text: final.String()}.Reply())
			spec := filepath.Join(base, "task.yaml")
			section := ""
			if pin == "off" {
				section = "sandbox: {mode: \"off\"}\n"
			}
			mustWriteFile(t, spec, "version: 1\nname: leak\nmodel: gpt-4.1-mini\nprompt: Fix it.\n"+
				"permissions:\n  read: allow\n  edit: {\"**\": allow}\n  bash: {\"bash attack.sh\": allow}\nlimits: {max_steps: 5}\n"+section)
			gh := newFakeGitHub(t)
			gh.perms["sample-author"] = "admin" // the pull request's author, checked by the gate
			payload, err := os.ReadFile(filepath.Join(repoRoot, "github", "testdata", "events", "pull_request.opened.json"))
			if err != nil {
				t.Fatal(err)
			}
			a := newActionsRun(t, "pull_request", string(payload), gh.url(), remote.url,
				"GITHUB_TOKEN="+actToken, "RUNNER_COMMENT=true", "RUNNER_PULL_REQUEST=true", "GITHUB_BASE_REF=master")
			if pin != "off" {
				a.env = append(a.env, "RUNNER_SANDBOX_LAYERS="+pin)
			}
			out := filepath.Join(base, "out")
			res := runRunner(t, repo, a.env, "exec", spec, "--out", out, "--base-url", srv.URL())
			if res.code != 0 {
				t.Fatalf("exit %d, want 0\nstderr:\n%s", res.code, res.stderr)
			}

			// The attack ran: the tool result holds the config, without the
			// credentials; the included file is hidden but with mode off.
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model requests, want 3", len(reqs))
			}
			toolResult := toolResults(reqs[1].Messages())
			if !strings.Contains(toolResult, "=== config") || !strings.Contains(toolResult, "repositoryformatversion") {
				t.Fatalf("the attack did not read .git/config:\n%s", toolResult)
			}
			config, _, _ := strings.Cut(toolResult, "=== include")
			gitView, _, _ := strings.Cut(after(toolResult, "=== git"), "=== end")
			for name, part := range map[string]string{"cat .git/config": config, "git config --list": gitView} {
				for _, gone := range []string{"extraheader", "credential.helper", "[credential]", "includeif", "includeIf"} {
					if strings.Contains(part, gone) {
						t.Errorf("%s shows %q to the command:\n%s", name, gone, part)
					}
				}
			}
			included, _, _ := strings.Cut(after(toolResult, "=== include"), "=== git")
			if pin != "off" && strings.Contains(included, "extraheader") {
				t.Errorf("the included credentials file is readable under %s:\n%s", pin, included)
			}

			// No channel holds a token in any form.
			channels := map[string]string{"stdout": res.stdout, "stderr": withoutMasks(res.stderr), "fake GitHub": gh.all(),
				"pushed commits": gittest.Run(t, remote.bare, "log", "--all", "--format=%B%n%s"),
				"pushed refs":    gittest.Run(t, remote.bare, "for-each-ref", "--format=%(refname)")}
			for i, r := range reqs { // what tools gave the model (its own words come back as history)
				channels[fmt.Sprintf("tool results of model request %d", i+1)] = toolResults(r.Messages())
			}
			for name, content := range a.files(t) {
				channels[name] = content
			}
			for name, content := range readTree(t, out) {
				if name != "changes.patch" { // the patch is the model's change: hello.txt holds what it wrote
					channels["out/"+name] = content
				}
			}
			for ch, content := range channels {
				for form, v := range repeated {
					if i := strings.Index(content, v); i >= 0 {
						t.Errorf("%s holds the %s form of a token (%s): …%s…", ch, form, v, content[max(0, i-200):min(len(content), i+len(v)+100)])
					}
				}
			}
			if !strings.Contains(gh.commentBody(), "[REDACTED]") {
				t.Errorf("the sticky comment shows no redaction of the final message:\n%s", gh.commentBody())
			}

			// The runner's own push authenticated with the job's token.
			if got := remote.pushAuths(); len(got) == 0 || got[0] != "x-access-token:"+actToken {
				t.Errorf("push credentials %q, want x-access-token and the job's token", got)
			}
			// .git/config is whole again.
			if b, err := os.ReadFile(cfgPath); err != nil || string(b) != original {
				t.Errorf(".git/config after the run (%v):\n%s\nwant:\n%s", err, b, original)
			}
			// With mode off run.started says what stays readable.
			var started event.RunStarted
			for _, r := range readEvents(t, filepath.Join(out, "events.jsonl")) {
				if r.Type == "run.started" {
					_ = json.Unmarshal(r.Raw, &started)
				}
			}
			said := started.Sandbox != nil && slices.ContainsFunc(started.Sandbox.Limits, func(l string) bool {
				return strings.Contains(l, "git credentials") && strings.Contains(l, inc)
			})
			if said != (pin == "off") {
				t.Errorf("run.started sandbox limits %v: a git credentials note wanted only with mode off", started.Sandbox)
			}
		})
	}
}

// toolResults joins the contents of the tool messages of a request.
func toolResults(msgs []map[string]any) string {
	var b strings.Builder
	for _, m := range msgs {
		if m["role"] == "tool" {
			s, _ := m["content"].(string)
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}

// after is the text after the first sep ("" without one).
func after(s, sep string) string {
	_, a, _ := strings.Cut(s, sep)
	return a
}

// percentAll percent-encodes every byte of s.
func percentAll(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// withoutMasks drops the runner's ::add-mask:: lines (they name secrets so
// that GitHub hides them in the log).
func withoutMasks(s string) string {
	lines := strings.Split(s, "\n")
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "::add-mask::") }), "\n")
}

// workflowCommandLines are the workflow commands a model or a tool
// prints in issue 30's third attack, each marked "pwned".
func workflowCommandLines() []string {
	return []string{"::error title=pwned::pwned error", "::add-mask::pwned-mask", "::set-output name=status::pwned",
		"##[set-output name=x;]pwned", "  ::notice::pwned indented", "::stop-commands::pwnedtoken",
		"::warning::pwned after its own stop", "::pwnedtoken::", "::warning::pwned after resuming", "##[error]pwned old form"}
}

// TestAttackWorkflowCommandsStayText: under GitHub Actions, the final
// message and a tool's output are full of workflow commands (::error,
// ::add-mask::, ::set-output, ##[…], a ::stop-commands:: of their own);
// read as the Actions runner reads a step's stdout and stderr, none of
// them is live. The control: outside Actions the same run prints them
// raw, and the reader finds them (so it can fail).
func TestAttackWorkflowCommandsStayText(t *testing.T) {
	lines := workflowCommandLines()
	script := "#!/bin/sh\n"
	for _, l := range lines {
		script += "echo '" + l + "'\n"
	}
	for _, actions := range []bool{true, false} {
		t.Run(fmt.Sprintf("actions=%v", actions), func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			repo := filepath.Join(base, "repo")
			mustWriteFile(t, filepath.Join(repo, "cmds.sh"), script)
			mustWriteFile(t, filepath.Join(repo, "README"), "small\n")
			gittest.Run(t, repo, "init", "-q", "-b", "master")
			gittest.Run(t, repo, "add", "-A")
			gittest.Run(t, repo, "commit", "-q", "-m", "init")
			spec := filepath.Join(base, "task.yaml")
			mustWriteFile(t, spec, "version: 1\nname: cmds\nmodel: gpt-4.1-mini\nprompt: Run it.\n"+
				"permissions:\n  read: allow\n  bash: {\"sh cmds.sh\": allow}\nlimits: {max_steps: 4}\n")
			srv := newModel(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("bash", `{"command":"sh cmds.sh"}`)}}.Reply(),
				llmtest.Turn{Text: "Result:\n" + strings.Join(lines, "\n")}.Reply())
			gh := newFakeGitHub(t)
			a := newActionsRun(t, "push", `{"ref":"refs/heads/master"}`, gh.url(), "https://github.com")
			env := a.env
			if !actions {
				env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "GITHUB_") })
			}
			res := runRunner(t, repo, env, "exec", spec, "--out", filepath.Join(base, "out"), "--base-url", srv.URL())
			if res.code != 0 {
				t.Fatalf("exit %d\n%s", res.code, res.stderr)
			}
			if !strings.Contains(toolResults(srv.Requests()[1].Messages()), "pwned-mask") {
				t.Fatal("the tool did not print the commands: the attack did not run")
			}
			var live []workflowCommand
			for stream, text := range map[string]string{"stdout": res.stdout, "stderr": res.stderr} {
				for _, c := range liveCommands(stream, text) {
					if strings.Contains(c.line, "pwned") {
						live = append(live, c)
					}
				}
			}
			if actions && len(live) > 0 {
				t.Errorf("live workflow commands from the model or a tool: %q", live)
			}
			if !actions && len(live) == 0 {
				t.Errorf("the control: outside Actions the final message is printed as is, yet the reader found no command:\n%s", res.stdout)
			}
		})
	}
}
