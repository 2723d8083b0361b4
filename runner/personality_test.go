package runner

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// mcpLikeSchema is a tool-parameter schema of the kind MCP servers and
// generated tools send: keywords Gemini does not know, an integer enum, a
// string format, a $ref and a nullable type list.
const mcpLikeSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,
	"properties":{"path":{"type":"string","format":"uri"},"mode":{"type":"integer","enum":[1,2]},
	"opts":{"$ref":"#/$defs/opts"}},"required":["path"],
	"$defs":{"opts":{"type":"object","properties":{"depth":{"type":["integer","null"]}},"additionalProperties":false}}}`

// schemaTool is a tool with a given parameter schema and output.
type schemaTool struct {
	name, schema, output string
}

func (s *schemaTool) Info() tools.Info {
	return tools.Info{Name: s.name, Description: "test tool " + s.name, Parameters: json.RawMessage(s.schema)}
}

func (s *schemaTool) Run(context.Context, tools.Call) (tools.Result, error) {
	return tools.Result{Output: s.output}, nil
}

// personalitySession is a six-step session: reasoning and tool calls (one
// tool answers with no output), a context overflow that makes the runner
// compact, and a final answer. ids are the tool-call ids the model sends,
// in the style of the endpoint the session came through.
func personalitySession(model string, ids []string) []llmtest.Reply {
	call := func(i int, name, args, reasoning string) llmtest.Reply {
		return llmtest.Turn{Model: model, Reasoning: reasoning,
			ToolCalls: []llmtest.ToolCall{{ID: ids[i], Name: name, Arguments: args}}}.Reply()
	}
	overflow := llmtest.HTTPError(http.StatusBadRequest,
		`{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	return []llmtest.Reply{
		call(0, "read", `{"path":"a.go"}`, "Read the code first."),
		call(1, "read", `{"path":"b.go"}`, "The bug may be in b.go."),
		overflow,
		llmtest.Turn{Model: model, Text: "Summary: read a.go and b.go; the bug is in b.go."}.Reply(),
		call(2, "write", `{"path":"b.go"}`, "Fix b.go."),
		call(3, "read", `{"path":"b.go"}`, "Check the fix."),
		call(4, "lookup", `{"path":"b.go","mode":1}`, "Look it up."),
		llmtest.Turn{Model: model, Reasoning: "Done.", Text: "Fixed the bug in b.go."}.Reply(),
	}
}

// TestProviderPersonalities runs the same six-step session (tool calls,
// reasoning, a compaction) against each provider personality twice:
// through the profile chosen for the provider's base URL and model, which
// the personality must accept throughout, and unadapted, which it must
// reject with the provider's own error.
func TestProviderPersonalities(t *testing.T) {
	t.Parallel()
	openAIIDs := []string{"call_4sQ1vx0Zr8", "call_Ka92mPq7Lw", "call_Zx81bnV0Qe", "call_Hn3kLp9Tt2", "call_Qq1wEr5Ty6"}
	kimiIDs := []string{"functions.read:0", "functions.read:1", "functions.write:2", "functions.read:3", "functions.lookup:4"}
	for _, tc := range []struct {
		name, baseURL, model string
		p                    llmtest.Personality
		ids                  []string
		temperature          *float64
		effort               string
		check                func(t *testing.T, reqs []llmtest.RecordedRequest)
	}{
		{name: "openai", baseURL: "https://api.openai.com/v1", model: "gpt-5-mini", p: llmtest.OpenAI(), ids: openAIIDs,
			temperature: ptr(0.2), check: func(t *testing.T, reqs []llmtest.RecordedRequest) {
				t.Helper()
				for _, r := range reqs {
					if r.Body["store"] != false {
						t.Fatalf("store = %v, want false", r.Body["store"])
					}
				}
			}},
		{name: "mistral", baseURL: "https://api.mistral.ai/v1", model: "mistral-large-latest", p: llmtest.Mistral(), ids: openAIIDs},
		{name: "anthropic", baseURL: "https://api.anthropic.com/v1", model: "claude-sonnet-4-5", p: llmtest.Anthropic(), ids: kimiIDs},
		{name: "openrouter claude", baseURL: "https://openrouter.ai/api/v1", model: "anthropic/claude-sonnet-4.5",
			p: llmtest.OpenRouterAnthropic(), ids: kimiIDs, effort: "high", check: checkCacheBreakpoints},
		{name: "gemini", baseURL: "https://generativelanguage.googleapis.com/v1beta/openai", model: "gemini-2.5-pro",
			p: llmtest.Gemini(), ids: openAIIDs},
		{name: "moonshot", baseURL: "https://api.moonshot.ai/v1", model: "kimi-k2.5", p: llmtest.Moonshot(), ids: kimiIDs,
			temperature: ptr(0.3)},
		{name: "xai", baseURL: "https://api.x.ai/v1", model: "grok-4", p: llmtest.XAI(), ids: openAIIDs, effort: "high"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			prof := llm.ProfileFor(tc.baseURL, tc.model)
			run := func(p llm.Profile) (Result, *llmtest.Server) {
				srv := llmtest.NewPersonalityServer(t, tc.p, personalitySession(tc.model, tc.ids)...)
				provider, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "test", HTTPClient: srv.Client(),
					IdleTimeout: time.Minute, Profile: &p})
				if err != nil {
					t.Fatal(err)
				}
				cfg := testConfig(provider, &recSink{}, &fakeTool{name: "read"},
					&schemaTool{name: "write", schema: `{"type":"object","properties":{"path":{"type":"string"}}}`},
					&schemaTool{name: "lookup", schema: mcpLikeSchema, output: "found"})
				cfg.ModelName, cfg.Temperature, cfg.ReasoningEffort = tc.model, tc.temperature, tc.effort
				return runTest(t, cfg), srv
			}

			res, srv := run(prof)
			if res.Status != event.StatusSuccess || res.Compactions != 1 || res.Steps != 6 || res.FinalMessage != "Fixed the bug in b.go." {
				t.Fatalf("profile %q: result %+v\nrejections: %v", prof.Name, res, srv.Rejections())
			}
			if r := srv.Rejections(); len(r) != 0 {
				t.Fatalf("profile %q: the personality rejected %v", prof.Name, r)
			}
			if tc.check != nil {
				tc.check(t, srv.Requests())
			}

			res, srv = run(llm.Profile{})
			rejected := srv.Rejections()
			t.Logf("profile %q; unadapted: %d requests, rejected with %v", prof.Name, len(srv.Requests()), rejected)
			if res.Status == event.StatusSuccess || len(rejected) == 0 {
				t.Fatalf("unadapted: result %+v, rejections %v", res, rejected)
			}
			if err := res.RunError(); err == nil || !strings.Contains(err.Message, firstMessage(rejected[0])) {
				t.Errorf("unadapted: run error %v does not carry the provider's message %s", err, rejected[0])
			}
		})
	}
}

// firstMessage returns a recognisable piece of a rejection body's message.
func firstMessage(body string) string {
	for _, key := range []string{`"message":"`, `"error":"`} {
		if i := strings.Index(body, key); i >= 0 {
			rest := body[i+len(key):]
			return rest[:min(len(rest), 20)]
		}
	}
	return body
}

// checkCacheBreakpoints asserts that every request marks its system
// prompt and its last message with cache_control.
func checkCacheBreakpoints(t *testing.T, reqs []llmtest.RecordedRequest) {
	t.Helper()
	marked := func(m map[string]any) bool {
		parts, _ := m["content"].([]any)
		for _, p := range parts {
			if pm, ok := p.(map[string]any); ok && pm["cache_control"] != nil {
				return true
			}
		}
		return false
	}
	for i, r := range reqs {
		msgs := r.Messages()
		if !marked(msgs[0]) || !marked(msgs[len(msgs)-1]) {
			t.Fatalf("request %d: system or last message without cache_control: %s", i, r.Raw)
		}
		if eff, _ := r.Body["reasoning"].(map[string]any); eff["effort"] != "high" {
			t.Fatalf("request %d: reasoning = %v, want {effort: high}", i, r.Body["reasoning"])
		}
	}
}
