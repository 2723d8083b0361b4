package pipeline

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestExecClaudeShorthandWithoutOpenAIKey: --model sonnet, or its full
// name, with only ANTHROPIC_API_KEY and --base-url at a fake, goes over
// the anthropic wire; chat had no key to send.
func TestExecClaudeShorthandWithoutOpenAIKey(t *testing.T) {
	for _, model := range []string{"sonnet", "claude-sonnet-4-5"} {
		t.Run(model, func(t *testing.T) {
			spec, repo := execFixture(t)
			srv := llmtest.NewAnthropicServer(t, llmtest.AnthropicStep{Turn: llmtest.AnthropicTurn{Text: "done"}})
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL(), Model: model,
				Quiet: true, Stderr: &bytes.Buffer{}, Environ: []string{"ANTHROPIC_API_KEY=sk-ant-unit-0123456789abcdef"}})
			if err != nil {
				t.Fatal(err)
			}
			if reqs := srv.Requests(); len(reqs) == 0 || reqs[0].Body["model"] != "claude-sonnet-4-5" {
				t.Errorf("the anthropic fake was not asked for claude-sonnet-4-5: %v", reqs)
			}
		})
	}
}

// TestExecClaudeMissingKeyNamesAnthropic: with no key at all, a Claude
// model's error names ANTHROPIC_API_KEY and Anthropic's endpoint.
func TestExecClaudeMissingKeyNamesAnthropic(t *testing.T) {
	spec, repo := execFixture(t)
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), Model: "sonnet",
		Quiet: true, Stderr: &bytes.Buffer{}, Environ: []string{}})
	want := "ANTHROPIC_API_KEY is not set: set it to talk to https://api.anthropic.com/v1 (wire anthropic)"
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// TestExecBaseURLWithEndpointPath: a base URL that already ends in the
// wire's endpoint path is refused before any model call, with the URL to
// use instead.
func TestExecBaseURLWithEndpointPath(t *testing.T) {
	spec, repo := execFixture(t)
	srv := newModel(t, llmtest.Turn{Text: "done"}.Reply())
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: srv.URL() + "/chat/completions",
		Quiet: true, APIKey: "sk-unit-0123456789abcdef", Stderr: &bytes.Buffer{}})
	want := "drop that suffix and use " + srv.URL()
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model calls, want none", n)
	}
}
