package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// effortSpec is runSpec with a model and a reasoning_effort.
func effortSpec(model, effort string) string {
	return strings.Replace(runSpec, "model: gpt-4.1-mini\n", "model: "+model+"\nreasoning_effort: "+effort+"\n", 1)
}

// TestExecReasoningEffortOnEachWire: the spec's reasoning_effort reaches
// each wire's fake in that wire's own member, and run.started records it.
func TestExecReasoningEffortOnEachWire(t *testing.T) {
	tests := []struct {
		wire, model, effort string
		server              func(t *testing.T) (url string, body func() map[string]any)
		check               func(body map[string]any) string // "" when right
	}{
		{"chat", "gpt-5-mini", "minimal", func(t *testing.T) (string, func() map[string]any) {
			t.Helper()
			s := newModel(t, llmtest.Turn{Text: "done"}.Reply())
			return s.URL(), func() map[string]any { return s.Requests()[0].Body }
		}, func(b map[string]any) string {
			if b["reasoning_effort"] != "minimal" {
				return "reasoning_effort"
			}
			return ""
		}},
		{"responses", "gpt-5-mini", "high", func(t *testing.T) (string, func() map[string]any) {
			t.Helper()
			s := llmtest.NewResponsesServer(t, llmtest.ResponsesStep{Turn: llmtest.ResponsesTurn{Model: "gpt-5-mini", Text: "done"}})
			return s.URL(), func() map[string]any { return s.Requests()[0].Body }
		}, func(b map[string]any) string {
			if r, _ := b["reasoning"].(map[string]any); r["effort"] != "high" {
				return "reasoning.effort"
			}
			if _, ok := b["reasoning_effort"]; ok {
				return "no reasoning_effort"
			}
			return ""
		}},
		{"anthropic", "claude-sonnet-4-5", "medium", func(t *testing.T) (string, func() map[string]any) {
			t.Helper()
			s := llmtest.NewAnthropicServer(t, llmtest.AnthropicStep{Turn: llmtest.AnthropicTurn{Thinking: "hmm", Text: "done"}})
			return s.URL(), func() map[string]any { return s.Requests()[0].Body }
		}, func(b map[string]any) string {
			th, _ := b["thinking"].(map[string]any)
			if th["type"] != "enabled" || th["budget_tokens"] != float64(8192) {
				return "thinking {type: enabled, budget_tokens: 8192}"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.wire, func(t *testing.T) {
			spec, repo := execFixture(t)
			mustWrite(t, spec, effortSpec(tt.model, tt.effort))
			url, body := tt.server(t)
			out := t.TempDir()
			_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: url, Wire: tt.wire, Quiet: true,
				APIKey: "sk-unit-0123456789abcdef", Environ: []string{"ANTHROPIC_API_KEY=sk-ant-unit-0123456789abcdef"}})
			if err != nil {
				t.Fatal(err)
			}
			b := body()
			if want := tt.check(b); want != "" {
				data, _ := json.Marshal(b)
				t.Errorf("request body lacks %s:\n%s", want, data)
			}
			log, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(log), "\n")
			if !strings.Contains(first, `"reasoning_effort":"`+tt.effort+`"`) {
				t.Errorf("run.started lacks the effort: %s", first)
			}
		})
	}
}

// TestExecReasoningEffortRefusedOnWire: xhigh has no thinking budget on
// the anthropic wire; the run is refused before any model call, at the
// key's position.
func TestExecReasoningEffortRefusedOnWire(t *testing.T) {
	spec, repo := execFixture(t)
	mustWrite(t, spec, effortSpec("claude-sonnet-4-5", "xhigh"))
	s := llmtest.NewAnthropicServer(t)
	_, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: s.URL(), Wire: "anthropic", Quiet: true,
		Environ: []string{"ANTHROPIC_API_KEY=sk-ant-unit-0123456789abcdef"}})
	want := spec + `:4:19: reasoning_effort "xhigh": the anthropic wire takes none, minimal, low, medium, high`
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d model calls, want none", n)
	}
}

// TestExecReasoningEffortOnUnknownResponsesModel: a model the catalog
// does not know (a gateway's name) gets the effort on the responses wire
// as reasoning.effort, as run.started says.
func TestExecReasoningEffortOnUnknownResponsesModel(t *testing.T) {
	spec, repo := execFixture(t)
	mustWrite(t, spec, effortSpec("my-gateway-model", "high"))
	s := llmtest.NewResponsesServer(t, llmtest.ResponsesStep{Turn: llmtest.ResponsesTurn{Model: "my-gateway-model", Text: "done"}})
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: t.TempDir(), BaseURL: s.URL(), Wire: "responses",
		Quiet: true, APIKey: "sk-unit-0123456789abcdef", Stderr: &bytes.Buffer{}}); err != nil {
		t.Fatal(err)
	}
	b := s.Requests()[0].Body
	if r, _ := b["reasoning"].(map[string]any); r["effort"] != "high" {
		data, _ := json.Marshal(b)
		t.Errorf("request body lacks reasoning.effort high:\n%s", data)
	}
}

// TestExecReasoningEffortDroppedForNonReasoningModel: OpenAI answers a
// reasoning effort for gpt-4.1-mini with a 400. The catalog knows it does
// not reason, so the run warns, sends none, and run.started records none.
func TestExecReasoningEffortDroppedForNonReasoningModel(t *testing.T) {
	spec, repo := execFixture(t)
	mustWrite(t, spec, effortSpec("gpt-4.1-mini", "high"))
	srv := llmtest.NewPersonalityServer(t, llmtest.OpenAI(), llmtest.Turn{Text: "done"}.Reply())
	out := t.TempDir()
	var stderr bytes.Buffer
	if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: out, BaseURL: srv.URL(), Quiet: true,
		APIKey: "sk-unit-0123456789abcdef", Stderr: &stderr}); err != nil {
		t.Fatalf("%v (rejections %v)", err, srv.Rejections())
	}
	if _, ok := srv.Requests()[0].Body["reasoning_effort"]; ok {
		t.Error("reasoning_effort was sent to gpt-4.1-mini")
	}
	want := `runner: warning: reasoning_effort "high" is not sent: model "gpt-4.1-mini" does not reason`
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	log, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(log), "\n"); strings.Contains(first, `"reasoning_effort"`) {
		t.Errorf("run.started records an effort that was not sent: %s", first)
	}
}
