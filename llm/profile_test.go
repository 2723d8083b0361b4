package llm_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

func TestProfileFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, model, want string }{
		{"https://api.openai.com/v1", "gpt-4.1-mini", "openai"},
		{"https://api.openai.com/v1", "o4-mini", "openai+openai-reasoning"},
		{"https://api.mistral.ai/v1", "mistral-large-latest", "mistral"},
		{"http://vllm.internal:8000/v1", "mistralai/Devstral-Small-2505", "mistral"},
		{"https://api.anthropic.com/v1", "claude-sonnet-4-5", "anthropic"},
		{"https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4.5", "anthropic+anthropic-cache+openrouter"},
		{"http://litellm.corp:4000/v1", "claude-opus-4", "anthropic+anthropic-cache"},
		{"https://generativelanguage.googleapis.com/v1beta/openai", "gemini-2.5-pro", "gemini"},
		{"https://openrouter.ai/api/v1", "google/gemini-2.5-flash", "gemini+openrouter"},
		{"https://api.moonshot.ai/v1", "kimi-k2.5", "moonshot-thinking+moonshot"},
		{"https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen3-coder-plus", "qwen"},
		{"https://api.x.ai/v1", "grok-4", "xai-grok-4"},
		{"http://localhost:11434/v1", "llama3.1", ""},
	} {
		if got := llm.ProfileFor(tc.url, tc.model).Name; got != tc.want {
			t.Errorf("ProfileFor(%s, %s) = %q, want %q", tc.url, tc.model, got, tc.want)
		}
	}
	if _, ok := llm.NamedProfile("mistral"); !ok {
		t.Error("NamedProfile(mistral) not found")
	}
	if p, ok := llm.NamedProfile("none"); !ok || p.ToolCallIDs != "" || p.StoreFalse {
		t.Errorf("NamedProfile(none) = %+v, %v", p, ok)
	}
	if _, ok := llm.NamedProfile("nope"); ok {
		t.Error("NamedProfile(nope) found")
	}
}

// TestPersonalityRules: each rule of each personality alone. The request
// breaks just that rule: unadapted it is rejected with the provider's
// error (a fatal, non-retried error), through the profile it is accepted.
func TestPersonalityRules(t *testing.T) {
	t.Parallel()
	call := func(id string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "read", Arguments: json.RawMessage(`{}`)}}}
	}
	answer := func(id, out string) llm.Message { return llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: out} }
	user := func(s string) llm.Message { return llm.Message{Role: llm.RoleUser, Content: s} }
	sys := llm.Message{Role: llm.RoleSystem, Content: "You are a coding agent."}
	read := []llm.ToolDef{{Name: "read", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	for _, tc := range []struct {
		name, url string
		p         llmtest.Personality
		req       llm.Request
		wantMsg   string
	}{
		{"mistral ids", "https://api.mistral.ai/v1", llmtest.Mistral(), llm.Request{Model: "mistral-small-latest",
			Messages: []llm.Message{sys, user("go"), call("call_1"), answer("call_1", "x")}, Tools: read}, "Tool call id was call_1"},
		{"mistral user after tool", "https://api.mistral.ai/v1", llmtest.Mistral(), llm.Request{Model: "mistral-small-latest",
			Messages: []llm.Message{user("go"), call("abcDEF123"), answer("abcDEF123", "x"), user("last step")}, Tools: read}, "Unexpected role 'user' after role 'tool'"},
		{"anthropic empty assistant content", "https://api.anthropic.com/v1", llmtest.Anthropic(), llm.Request{Model: "claude-haiku-4-5",
			Messages: []llm.Message{user("go"), call("toolu_1"), answer("toolu_1", "x")}, Tools: read}, "text content blocks must be non-empty"},
		{"anthropic empty tool result", "https://api.anthropic.com/v1", llmtest.Anthropic(), llm.Request{Model: "claude-haiku-4-5",
			Messages: []llm.Message{user("go"), {Role: llm.RoleAssistant, Content: "Reading.", ToolCalls: call("toolu_1").ToolCalls}, answer("toolu_1", "")}, Tools: read},
			"text content blocks must be non-empty"},
		{"anthropic blank user message", "https://api.anthropic.com/v1", llmtest.Anthropic(), llm.Request{Model: "claude-haiku-4-5",
			Messages: []llm.Message{user("go"), {Role: llm.RoleAssistant, Content: "ok"}, user("  ")}}, "text content blocks must be non-empty"},
		{"anthropic ids", "https://api.anthropic.com/v1", llmtest.Anthropic(), llm.Request{Model: "claude-haiku-4-5",
			Messages: []llm.Message{user("go"), {Role: llm.RoleAssistant, Content: "Reading.", ToolCalls: call("functions.read:0").ToolCalls}, answer("functions.read:0", "x")}, Tools: read},
			"tool_use.id: String should match pattern"},
		{"gemini integer enum", "https://generativelanguage.googleapis.com/v1beta/openai", llmtest.Gemini(), llm.Request{Model: "gemini-2.5-flash",
			Messages: []llm.Message{user("go")}, Tools: []llm.ToolDef{{Name: "pick", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","enum":[1,2,3]}}}`)}}},
			"enum: only allowed for STRING type"},
		{"gemini properties on a string", "https://generativelanguage.googleapis.com/v1beta/openai", llmtest.Gemini(), llm.Request{Model: "gemini-2.5-flash",
			Messages: []llm.Message{user("go")}, Tools: []llm.ToolDef{{Name: "pick", Parameters: json.RawMessage(`{"type":"object","properties":{"s":{"type":"string","properties":{"x":{"type":"string"}}}}}`)}}},
			"properties: only allowed for OBJECT type"},
		{"gemini string format", "https://generativelanguage.googleapis.com/v1beta/openai", llmtest.Gemini(), llm.Request{Model: "gemini-2.5-flash",
			Messages: []llm.Message{user("go")}, Tools: []llm.ToolDef{{Name: "fetch", Parameters: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","format":"uri"}}}`)}}},
			"only 'enum' and 'date-time' are supported"},
		{"gemini array without items", "https://generativelanguage.googleapis.com/v1beta/openai", llmtest.Gemini(), llm.Request{Model: "gemini-2.5-flash",
			Messages: []llm.Message{user("go")}, Tools: []llm.ToolDef{{Name: "many", Parameters: json.RawMessage(`{"type":"object","properties":{"xs":{"type":"array"}}}`)}}},
			"items: missing field"},
		{"gemini unknown keyword", "https://generativelanguage.googleapis.com/v1beta/openai", llmtest.Gemini(), llm.Request{Model: "gemini-2.5-flash",
			Messages: []llm.Message{user("go")}, Tools: []llm.ToolDef{{Name: "read", Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"path":{"type":"string"}}}`)}}},
			`Unknown name "additionalProperties"`},
		{"openai temperature on a reasoning model", "https://api.openai.com/v1", llmtest.OpenAI(), llm.Request{Model: "o3",
			Messages: []llm.Message{user("go")}, Temperature: ptr(0.0)}, "does not support 0 with this model"},
		{"openai top_p on a reasoning model", "https://api.openai.com/v1", llmtest.OpenAI(), llm.Request{Model: "gpt-5",
			Messages: []llm.Message{user("go")}, TopP: ptr(0.9)}, "'top_p' is not supported"},
		{"moonshot fixed temperature", "https://api.moonshot.ai/v1", llmtest.Moonshot(), llm.Request{Model: "kimi-k2-thinking",
			Messages: []llm.Message{user("go")}, Temperature: ptr(0.7)}, "only 1 is allowed"},
		{"xai reasoning effort on grok-4", "https://api.x.ai/v1", llmtest.XAI(), llm.Request{Model: "grok-4-0709",
			Messages: []llm.Message{user("go")}, ReasoningEffort: "low"}, "Argument not supported on this model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			send := func(p llm.Profile) ([]llm.Event, *llmtest.Server) {
				srv := llmtest.NewPersonalityServer(t, tc.p, llmtest.Text("ok"))
				return collect(t, mustNew(t, llm.Config{BaseURL: srv.URL(), HTTPClient: srv.Client(), Profile: &p}), tc.req), srv
			}
			events, srv := send(llm.Profile{})
			last := events[len(events)-1]
			if last.Type != llm.EventError || !strings.Contains(last.Err.Error(), tc.wantMsg) || last.Err.(*llm.Error).Class != llm.ClassFatal {
				t.Fatalf("unadapted: last event %s %v, want a fatal error with %q (rejections %v)", last.Type, last.Err, tc.wantMsg, srv.Rejections())
			}
			prof := llm.ProfileFor(tc.url, tc.req.Model)
			events, srv = send(prof)
			if last := events[len(events)-1]; last.Type != llm.EventFinishStep {
				t.Fatalf("profile %q: %s %v (rejections %v)", prof.Name, last.Type, last.Err, srv.Rejections())
			}
		})
	}
}

// sentBody sends req through a provider with profile p and returns the
// request body the server received.
func sentBody(t *testing.T, p llm.Profile, req llm.Request) map[string]any {
	t.Helper()
	srv := llmtest.NewServer(t, llmtest.Text("ok"))
	collect(t, mustNew(t, llm.Config{BaseURL: srv.URL(), HTTPClient: srv.Client(), Profile: &p}), req)
	return srv.Requests()[0].Body
}

func TestToolCallIDRewrite(t *testing.T) {
	t.Parallel()
	var msgs []llm.Message
	ids := []string{"call_1234567890", "call_1234567891", "abcDEF123", "functions.read:0"}
	for _, id := range ids {
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "read", Arguments: json.RawMessage(`{}`)}}},
			llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: "x"})
	}
	for _, tc := range []struct {
		format llm.IDFormat
		valid  *regexp.Regexp
		kept   []string
	}{
		{llm.IDsMistral, regexp.MustCompile(`^[a-zA-Z0-9]{9}$`), []string{"abcDEF123"}},
		{llm.IDsAnthropic, regexp.MustCompile(`^[a-zA-Z0-9_-]+$`), []string{"call_1234567890", "call_1234567891", "abcDEF123"}},
	} {
		body := sentBody(t, llm.Profile{ToolCallIDs: tc.format}, llm.Request{Model: "m", Messages: msgs})
		sent := body["messages"].([]any)
		seen := map[string]bool{}
		for i := 0; i < len(sent); i += 2 {
			callID := sent[i].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["id"].(string)
			answerID := sent[i+1].(map[string]any)["tool_call_id"].(string)
			if callID != answerID || !tc.valid.MatchString(callID) || seen[callID] {
				t.Errorf("%s: %q became call %q, answer %q (seen before: %v)", tc.format, ids[i/2], callID, answerID, seen[callID])
			}
			seen[callID] = true
			for _, k := range tc.kept {
				if ids[i/2] == k && callID != k {
					t.Errorf("%s: valid id %q rewritten to %q", tc.format, k, callID)
				}
			}
		}
	}
}

func TestRequestTraits(t *testing.T) {
	t.Parallel()
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "sys"}, {Role: llm.RoleUser, Content: "go"},
		{Role: llm.RoleAssistant, Content: "", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read", Arguments: json.RawMessage(`{}`)}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: ""}, {Role: llm.RoleUser, Content: "next"}}
	req := llm.Request{Model: "m", Messages: msgs, ReasoningEffort: "medium"}
	roles := func(body map[string]any) string {
		var out []string
		for _, m := range body["messages"].([]any) {
			out = append(out, m.(map[string]any)["role"].(string))
		}
		return strings.Join(out, ",")
	}

	body := sentBody(t, llm.Profile{NoUserAfterTool: true}, req)
	if got := roles(body); got != "system,user,assistant,tool,assistant,user" {
		t.Errorf("NoUserAfterTool: roles %s", got)
	}
	body = sentBody(t, llm.Profile{NoEmptyContent: true}, req)
	sent := body["messages"].([]any)
	if _, has := sent[2].(map[string]any)["content"]; has {
		t.Errorf("NoEmptyContent: assistant tool call keeps its empty content: %v", sent[2])
	}
	if c := sent[3].(map[string]any)["content"]; c != "(no output)" {
		t.Errorf("NoEmptyContent: empty tool result = %v", c)
	}
	body = sentBody(t, llm.Profile{CacheControl: true}, req)
	sent = body["messages"].([]any)
	cached := func(i int) bool {
		parts, ok := sent[i].(map[string]any)["content"].([]any)
		return ok && parts[0].(map[string]any)["cache_control"] != nil
	}
	// the system prompt and the last two messages with content ("next", "go")
	if !cached(0) || !cached(4) || !cached(1) || cached(2) || cached(3) {
		t.Errorf("CacheControl: breakpoints wrong: %v", sent)
	}
	body = sentBody(t, llm.Profile{StoreFalse: true, ReasoningObject: true, Temperature: ptr(0.55), TopP: ptr(1.0)}, req)
	if body["store"] != false || body["temperature"] != 0.55 || body["top_p"] != 1.0 {
		t.Errorf("store/sampling: %v", body)
	}
	if diff := cmp.Diff(map[string]any{"effort": "medium"}, body["reasoning"]); diff != "" || body["reasoning_effort"] != nil {
		t.Errorf("reasoning object: %v %v", body["reasoning"], body["reasoning_effort"])
	}
	req.Temperature = ptr(0.2)
	body = sentBody(t, llm.Profile{Temperature: ptr(1.0), ReasoningEffort: map[string]string{"medium": "high"}}, req)
	if body["temperature"] != 0.2 || body["reasoning_effort"] != "high" {
		t.Errorf("default temperature must not replace a set one; effort mapped: %v %v", body["temperature"], body["reasoning_effort"])
	}
	body = sentBody(t, llm.Profile{Temperature: ptr(1.0), FixedTemperature: true, NoSampling: false}, req)
	if body["temperature"] != 1.0 {
		t.Errorf("fixed temperature: %v", body["temperature"])
	}
}
