package llm_test

import (
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestNativeRequestBodies checks what each wire sends for the runner's
// request options: structured output (tool choice required), reasoning
// effort, sampling and the output cap.
func TestNativeRequestBodies(t *testing.T) {
	t.Parallel()
	temp := 0.2
	tools := []llm.ToolDef{{Name: "StructuredOutput", Parameters: []byte(`{"type":"object"}`)}}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "sys"}, {Role: llm.RoleUser, Content: "q"}}
	for _, tc := range []struct {
		name     string
		wire     llm.Wire
		req      llm.Request
		want     []string
		wantNone []string
	}{
		{"anthropic structured output", llm.WireAnthropic,
			llm.Request{Model: "claude-sonnet-4-5", Messages: msgs, Tools: tools, ToolChoice: llm.ToolChoiceRequired, ReasoningEffort: "high", Temperature: &temp},
			[]string{`"tool_choice":{"type":"any"}`, `"temperature":0.2`, `"max_tokens":16384`}, []string{`"thinking"`}},
		{"anthropic thinking", llm.WireAnthropic,
			llm.Request{Model: "claude-sonnet-4-5", Messages: msgs, ReasoningEffort: "medium", Temperature: &temp, MaxOutputTokens: 1000},
			[]string{`"thinking":{"type":"enabled","budget_tokens":8192}`, `"max_tokens":12288`, `"system":[{"type":"text","text":"sys"`}, []string{`"temperature"`}},
		{"responses structured output", llm.WireResponses,
			llm.Request{Model: "gpt-5.1", Messages: msgs, Tools: tools, ToolChoice: llm.ToolChoiceRequired, ReasoningEffort: "low", Temperature: &temp, MaxOutputTokens: 500},
			[]string{`"tool_choice":"required"`, `"reasoning":{"effort":"low","summary":"auto"}`, `"max_output_tokens":500`, `"instructions":"sys"`, `"store":false`},
			[]string{`"temperature"`}},
		{"responses non-reasoning model", llm.WireResponses,
			llm.Request{Model: "gpt-4.1", Messages: msgs, Temperature: &temp},
			[]string{`"temperature":0.2`}, []string{`"include"`, `"reasoning"`}},
	} {
		srv := llmtest.NewServer(t, llmtest.Text("x"))
		p, err := llm.NewWire(tc.wire, llm.Config{BaseURL: srv.URL(), APIKey: "k", HTTPClient: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		for range p.Stream(t.Context(), tc.req) {
		}
		body := string(srv.Requests()[0].Raw)
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: body lacks %s:\n%s", tc.name, w, body)
			}
		}
		for _, w := range tc.wantNone {
			if strings.Contains(body, w) {
				t.Errorf("%s: body has %s:\n%s", tc.name, w, body)
			}
		}
	}
}
