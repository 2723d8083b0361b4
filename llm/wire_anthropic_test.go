package llm_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestAnthropicThreeStepSession: thinking with its signature, a redacted
// block, parallel tool calls and the final text cross three requests
// that the Messages personality accepts, and the thinking goes back
// verbatim on the next request.
func TestAnthropicThreeStepSession(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewAnthropicServer(t,
		turn(llmtest.AnthropicTurn{Thinking: "The test fails; read it.", Signature: "sig-step-1", RedactedThinking: "cmVkYWN0ZWQ=",
			ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: `{"path":"calc/calc_test.go"}`}}}),
		turn(llmtest.AnthropicTurn{Text: "Two reads at once.", ToolCalls: []llmtest.ToolCall{
			{ID: "toolu_a", Name: "read", Arguments: `{"path":"calc/calc.go"}`},
			{ID: "toolu_b", Name: "Grep", Arguments: `{"path":"calc","command":"Add"}`}}}),
		turn(llmtest.AnthropicTurn{Text: "Fixed: Add now adds."}),
	)
	steps := threeSteps(t, newAnthropic(t, srv), "claude-sonnet-4-5", srv.Rejections)
	if c := steps[1].msg.ToolCalls; len(c) != 2 || c[1].Name != "grep" || c[1].NameAsSent != "Grep" || string(c[0].Arguments) != `{"path":"calc/calc.go"}` {
		t.Errorf("parallel calls %+v", c)
	}
	if steps[0].msg.Reasoning != "The test fails; read it." || steps[2].msg.Content != "Fixed: Add now adds." {
		t.Errorf("reasoning %q, text %q", steps[0].msg.Reasoning, steps[2].msg.Content)
	}
	reqs := srv.Requests()
	h := reqs[0].Header
	if h.Get("x-api-key") != "sk-ant-test" || h.Get("anthropic-version") != llm.AnthropicVersion || h.Get("Authorization") != "" {
		t.Errorf("headers %v", h)
	}
	second := string(reqs[1].Raw)
	for _, want := range []string{`{"type":"thinking","thinking":"The test fails; read it.","signature":"sig-step-1"}`,
		`"data":"cmVkYWN0ZWQ="`, `"type":"tool_result","tool_use_id":"toolu_01llmtest"`} {
		if !strings.Contains(second, want) {
			t.Errorf("second request lacks %s:\n%s", want, second[strings.Index(second, `"messages"`):])
		}
	}
	if !strings.HasPrefix(string(reqs[2].Raw), prefixUntil(second, `"messages":[`)) {
		t.Errorf("the third request does not keep the second's tools and system bytes")
	}
}

func prefixUntil(s, marker string) string {
	i := strings.Index(s, marker)
	if i < 0 {
		return s
	}
	return s[:i]
}

// TestAnthropicStopReasons maps every documented stop_reason.
func TestAnthropicStopReasons(t *testing.T) {
	t.Parallel()
	for stop, want := range map[string]llm.FinishReason{
		"end_turn": llm.FinishStop, "stop_sequence": llm.FinishStop, "max_tokens": llm.FinishLength,
		"model_context_window_exceeded": llm.FinishLength, "refusal": llm.FinishContentFilter,
		"pause_turn": llm.FinishPaused, "tool_use": llm.FinishToolCalls,
	} {
		srv := llmtest.NewAnthropicServer(t, turn(llmtest.AnthropicTurn{Text: "partial", StopReason: stop}))
		r := callOnce(t, newAnthropic(t, srv), llm.Request{Model: "claude-haiku-4-5", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		if r.finish == nil || r.finish.FinishReason != want {
			t.Errorf("stop_reason %s: finish %+v, want %s", stop, r.finish, want)
		}
	}
}

// TestAnthropicErrors classifies the API's errors: 529 and an in-stream
// overloaded_error are retryable, a prompt too long compacts, a bad
// request is fatal, a cut stream is retryable.
func TestAnthropicErrors(t *testing.T) {
	t.Parallel()
	raw := func(r llmtest.Reply) llmtest.AnthropicStep { return llmtest.AnthropicStep{Raw: &r} }
	inStream := llmtest.SSE("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
	for _, tc := range []struct {
		name  string
		step  llmtest.AnthropicStep
		class llm.ErrorClass
	}{
		{"529", raw(llmtest.AnthropicOverloaded()), llm.ClassRetryable},
		{"in-stream overloaded", raw(inStream), llm.ClassRetryable},
		{"in-stream authentication_error", raw(llmtest.SSE(strings.Replace(string(inStream.Body), `"type":"overloaded_error","message":"Overloaded"`,
			`"type":"authentication_error","message":"invalid x-api-key"`, 1))), llm.ClassFatal},
		{"prompt too long", raw(llmtest.AnthropicError(400, "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum")), llm.ClassContextOverflow},
		{"bad request", raw(llmtest.AnthropicError(400, "invalid_request_error", "tools.0.input_schema: Field required")), llm.ClassFatal},
		{"rate limit", raw(llmtest.AnthropicError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")), llm.ClassRetryable},
		{"cut", turn(llmtest.AnthropicTurn{Text: "half", CutBeforeStop: true}), llm.ClassRetryable},
	} {
		srv := llmtest.NewAnthropicServer(t, tc.step)
		r := callOnce(t, newAnthropic(t, srv), llm.Request{Model: "claude-haiku-4-5", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		if r.err == nil || r.err.Class != tc.class {
			t.Errorf("%s: error %v, want class %s", tc.name, r.err, tc.class)
		}
		if tc.name == "cut" && !errors.Is(r.err, llm.ErrIncompleteStream) {
			t.Errorf("cut: %v does not wrap ErrIncompleteStream", r.err)
		}
	}
}

// TestAnthropicPersonalityRejects: the fake rejects what the API rejects,
// with its status and body; the provider's own request passes (control).
func TestAnthropicPersonalityRejects(t *testing.T) {
	t.Parallel()
	use := `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"read","input":{}}]}`
	result := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}`
	cc := `{"type":"text","text":"p","cache_control":{"type":"ephemeral"}}`
	for _, tc := range []struct{ name, body, want string }{
		{"thinking without signature", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},` +
			`{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"a"}]},{"role":"user","content":"q"}]}`,
			"messages.1.content.0.thinking.signature: Field required"},
		{"tool_result not after its tool_use", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},` + use +
			`,{"role":"user","content":"other"},` + result + `]}`, "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"},
		{"fifth cache_control", `{"model":"m","max_tokens":5,"system":[` + cc + `,` + cc + `],"messages":[{"role":"user","content":[` +
			cc + `,` + cc + `,` + cc + `]}]}`, "A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{"system role", `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"s"}]}`, `Unexpected role \"system\"`},
	} {
		srv := llmtest.NewAnthropicServer(t)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/messages", bytes.NewReader([]byte(tc.body)))
		req.Header.Set("x-api-key", "k")
		req.Header.Set("anthropic-version", llm.AnthropicVersion)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Type  string `json:"type"`
			Error struct{ Type, Message string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != 400 || body.Type != "error" || body.Error.Type != "invalid_request_error" ||
			!strings.Contains(mustMarshal(body.Error.Message), tc.want) {
			t.Errorf("%s: %d %+v, want 400 invalid_request_error %q", tc.name, resp.StatusCode, body, tc.want)
		}
	}
}

func mustMarshal(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestAnthropicCacheReads: over a 10-step session, at least 80% of the
// input tokens of the third request on are cache reads under the
// fake's prompt caching rule; without breakpoints (control) none are.
func TestAnthropicCacheReads(t *testing.T) {
	t.Parallel()
	var script []llmtest.AnthropicStep
	for i := range 9 {
		script = append(script, turn(llmtest.AnthropicTurn{Text: fmt.Sprintf("Step %d: reading.", i+1),
			ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: fmt.Sprintf(`{"path":"calc/file%d.go"}`, i)}}}))
	}
	script = append(script, turn(llmtest.AnthropicTurn{Text: "Done."}))
	srv := llmtest.NewAnthropicServer(t, script...)
	wireSession(t, newAnthropic(t, srv), "claude-sonnet-4-5", agentSystem(), agentTools(), 10,
		func(tc llm.ToolCall) string { return strings.Repeat("package calc // "+string(tc.Arguments)+"\n", 40) })
	var input, read int
	for i, u := range srv.Usages() {
		t.Logf("request %d: input %d, cache read %d, cache write %d", i+1, u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
		if i >= 2 {
			input += u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
			read += u.CacheReadInputTokens
		}
	}
	share := float64(read) / float64(input)
	t.Logf("cache reads from the third request on: %d of %d input tokens (%.1f%%)", read, input, 100*share)
	if share < 0.80 {
		t.Errorf("cache reads are %.1f%% of input tokens from the third request on, want at least 80%%", 100*share)
	}
	// Control: the same requests without their breakpoints read nothing.
	control := &llmtest.PromptCache{}
	for i, req := range srv.Requests() {
		var body map[string]any
		if err := json.Unmarshal(bytes.ReplaceAll(req.Raw, []byte(`,"cache_control":{"type":"ephemeral"}`), nil), &body); err != nil {
			t.Fatal(err)
		}
		if u := control.Usage(body); u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens != 0 {
			t.Errorf("control request %d without breakpoints: %+v", i+1, u)
		}
	}
}
