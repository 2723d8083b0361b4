package pipeline

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestActionsExitPathsWriteTheSummary: under GitHub Actions every way a
// run ends before its report leaves the step summary a line saying what
// happened: an invalid spec, a comment the trigger gate refuses, and a
// comment on a pull request the API says does not exist (404), whose
// error says "github: " once.
func TestActionsExitPathsWriteTheSummary(t *testing.T) {
	comment := func(body, pr string) string {
		return `{"action":"created","issue":{"number":5,"title":"x"` + pr + `},"comment":{"id":1,"body":"` + body +
			`","user":{"login":"alice","type":"User"}},"sender":{"login":"alice","type":"User"}}`
	}
	cases := []struct {
		name, event, payload, spec string
		api                        func(reg *githubtest.Registry)
		want                       []string
	}{
		{"invalid spec", "push", `{"ref":"refs/heads/main"}`, "version: 1\nname: bad\nmodel: gpt-4.1-mini\nprompt: hi\nlimits:\n  max_stepz: 3\n", nil,
			[]string{"runner: failed before it started (exit 2)", "max_stepz"}},
		{"not triggered", "issue_comment", comment("just chatting", ""), "", nil,
			[]string{"runner unit: not run", "@runner"}},
		{"pull request 404", "issue_comment", comment("@runner go", `,"pull_request":{"url":"u"}`), "", func(reg *githubtest.Registry) {
			reg.Register(http.MethodGet, "/repos/octo/hello/collaborators/alice/permission", githubtest.JSON(200, map[string]any{"permission": "write"})).AnyTimes(0)
			reg.Register(http.MethodGet, "/repos/octo/hello/pulls/5", githubtest.Error(404, "Not Found"))
		}, []string{"failed before it started (exit 3)", "404"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, repo := execFixture(t)
			if c.spec != "" {
				mustWrite(t, spec, c.spec)
			}
			dir := t.TempDir()
			eventPath, summary := filepath.Join(dir, "event.json"), filepath.Join(dir, "summary")
			mustWrite(t, eventPath, c.payload)
			api := githubtest.New(t, "/api/v3")
			if c.api != nil {
				c.api(api)
			}
			env := []string{"GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=octo/hello", "GITHUB_EVENT_NAME=" + c.event,
				"GITHUB_EVENT_PATH=" + eventPath, "GITHUB_API_URL=" + api.Server.URL, "GITHUB_SERVER_URL=https://github.com",
				"GITHUB_RUN_ID=7", "GITHUB_OUTPUT=" + filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY=" + summary,
				"GITHUB_TOKEN=ghs_0123456789abcdefghijklmnopqrstuvwx", "RUNNER_GITHUB_LOGIN=github-actions[bot]", "RUNNER_TRIGGER=@runner"}
			srv := newModel(t, llmtest.Turn{Text: "Done."}.Reply())
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(dir, "out"), BaseURL: srv.URL(), Quiet: true,
				APIKey: "sk-unit-0123456789abcdef", Environ: env})
			if err != nil && strings.Contains(err.Error(), "github: github:") {
				t.Errorf("error stutters: %v", err)
			}
			s, rerr := os.ReadFile(summary)
			for _, w := range c.want {
				if !strings.Contains(string(s), w) {
					t.Errorf("step summary (%v) lacks %q:\n%s\n(err %v)", rerr, w, s, err)
				}
			}
		})
	}
}

// TestCommentOnScheduleSaysWhy: comment asked on a schedule event, which
// has nothing to comment on, says so instead of posting nothing silently.
func TestCommentOnScheduleSaysWhy(t *testing.T) {
	spec, repo := execFixture(t)
	env, _, _ := actionsEnv(t, "schedule", `{"schedule":"0 3 * * *"}`, "RUNNER_COMMENT=true")
	srv := newModel(t, llmtest.Turn{Text: "Done."}.Reply())
	var stderr strings.Builder
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(),
		APIKey: "sk-unit-0123456789abcdef", Environ: env, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "a schedule event has no issue or pull request to post it on") {
		t.Errorf("stderr does not say why no comment is posted:\n%s", stderr.String())
	}
}
