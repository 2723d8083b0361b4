package llm_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestResendWithoutRejectedMember: a 400 or 422 that names, in any
// endpoint's wording, a member the client added on its own (stream_options,
// store, tool_choice "auto", a profile's default sampling or reasoning) is
// retryable at once (Resend); the provider leaves that member out of every
// later request, and the rest of the body stays the same.
func TestResendWithoutRejectedMember(t *testing.T) {
	t.Parallel()
	temp, topP := 0.3, 0.9
	cases := []struct {
		name, source, member string
		reply                llmtest.Reply
		profile              llm.Profile
		tools                bool
	}{
		{name: "openai unknown_parameter", source: "r3 case 64; https://github.com/QuantumNous/new-api/issues/418",
			member: "stream_options",
			reply:  jsonError(400, `{"error":{"message":"Unknown parameter: 'stream_options'. (request id: 2024)","type":"invalid_request_error","param":"stream_options","code":"unknown_parameter"}}`)},
		{name: "azure unrecognized request argument", source: "Azure OpenAI before api-version 2024-09-01-preview; r3 case 64 rules",
			member: "stream_options",
			reply:  jsonError(400, `{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":null,"code":null}}`)},
		{name: "google unknown name, array body", source: "Google API JSON mapping error ('Invalid JSON payload received. Unknown name … Cannot find field.')",
			member: "store", profile: llm.Profile{StoreFalse: true},
			reply: jsonError(400, `[{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"store\": Cannot find field.","status":"INVALID_ARGUMENT"}}]`)},
		{name: "pydantic extra_forbidden, 422", source: "FastAPI/pydantic validation body (Mistral-style 422 with detail[].loc)",
			member: "stream_options",
			reply:  jsonError(422, `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted","input":{"include_usage":true}}]},"type":"invalid_request_error","param":null,"code":null}`)},
		{name: "litellm unsupported params", source: "LiteLLM UnsupportedParamsError ('does not support parameters … set litellm.drop_params=True')",
			member: "tool_choice", tools: true,
			reply: jsonError(400, "{\"error\":{\"message\":\"litellm.UnsupportedParamsError: openai does not support parameters: ['tool_choice'], for model=m. To drop these, set `litellm.drop_params=True`\",\"type\":\"None\",\"param\":null,\"code\":\"400\"}}")},
		{name: "json schema additional properties", source: "Python jsonschema message ('Additional properties are not allowed (… was unexpected)') from validating proxies",
			member: "temperature", profile: llm.Profile{Temperature: &temp},
			reply: jsonError(400, `{"error":{"message":"Additional properties are not allowed ('temperature' was unexpected)","type":"invalid_request_error"}}`)},
		{name: "python unexpected keyword argument", source: "constructed sibling: a thin Python proxy relaying TypeError text",
			member: "top_p", profile: llm.Profile{TopP: &topP},
			reply: jsonError(400, `{"detail":"create() got an unexpected keyword argument 'top_p'"}`)},
		{name: "profile reasoning effort unrecognized", source: "Azure OpenAI older api-versions ('Unrecognized request argument supplied: reasoning_effort')",
			member: "reasoning_effort", profile: llm.Profile{ReasoningEffort: map[string]string{"": "none"}},
			reply: jsonError(400, `{"error":{"message":"Unrecognized request argument supplied: reasoning_effort","type":"invalid_request_error","param":null,"code":null}}`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, c.reply, llmtest.Text("ok"), llmtest.Text("again"))
			prof := c.profile
			p := mustNew(t, llm.Config{BaseURL: srv.URL(), HTTPClient: srv.Client(), Profile: &prof})
			req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
			if c.tools {
				req.Tools, req.ToolChoice = []llm.ToolDef{{Name: "read"}}, llm.ToolChoiceAuto
			}
			first := collect(t, p, req)
			e, ok := first[len(first)-1].Err.(*llm.Error)
			if !ok || e.Class != llm.ClassRetryable || !e.Resend || e.RetryAfter != 0 || !strings.Contains(e.Error(), c.member) {
				t.Fatalf("source %s: want a retryable resend naming %s, got %s", c.source, c.member, dump(first))
			}
			for _, want := range []string{"ok", "again"} {
				if v := view(collect(t, p, req)); v.Text != want || v.Finish != llm.FinishStop {
					t.Fatalf("after the resend: %+v", v)
				}
			}
			reqs := srv.Requests()
			if _, ok := reqs[0].Body[c.member]; !ok {
				t.Fatalf("the first request lacks %s: %s", c.member, reqs[0].Raw)
			}
			want := reqs[0].Body
			delete(want, c.member)
			for _, r := range reqs[1:] {
				if diff := cmp.Diff(want, r.Body); diff != "" {
					t.Errorf("a later request differs from the first beyond %s (-want +got):\n%s", c.member, diff)
				}
			}
		})
	}
}

// TestResendOnlyOnce: a rejection that names a member the request asked
// for, or that comes again after the member was dropped, is fatal.
func TestResendOnlyOnce(t *testing.T) {
	t.Parallel()
	unknown := jsonError(400, `{"error":{"message":"Unknown parameter: 'stream_options'.","type":"invalid_request_error","param":"stream_options","code":"unknown_parameter"}}`)
	t.Run("again after the drop", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t, unknown, unknown)
		p := mustNew(t, llm.Config{BaseURL: srv.URL(), HTTPClient: srv.Client(), Profile: &llm.Profile{}})
		req := llm.Request{Model: "m"}
		if v := view(collect(t, p, req)); v.Class != llm.ClassRetryable {
			t.Fatalf("first: %+v", v)
		}
		second := collect(t, p, req)
		if e := second[len(second)-1].Err.(*llm.Error); e.Class != llm.ClassFatal || e.Resend {
			t.Fatalf("second rejection: want fatal without resend, got %s", dump(second))
		}
	})
	t.Run("a member the task asked for", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t, jsonError(400, `{"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model.","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}`))
		p := mustNew(t, llm.Config{BaseURL: srv.URL(), HTTPClient: srv.Client(), Profile: &llm.Profile{}})
		temp := 0.2
		evs := collect(t, p, llm.Request{Model: "m", Temperature: &temp})
		if e := evs[len(evs)-1].Err.(*llm.Error); e.Class != llm.ClassFatal || e.Resend {
			t.Fatalf("want fatal, got %s", dump(evs))
		}
	})
	t.Run("a 400 that names the member without rejecting it", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t, jsonError(400, `{"error":{"message":"stream_options.include_usage must be a boolean","type":"invalid_request_error","param":"stream_options"}}`))
		p := mustNew(t, llm.Config{BaseURL: srv.URL(), HTTPClient: srv.Client(), Profile: &llm.Profile{}})
		evs := collect(t, p, llm.Request{Model: "m"})
		if e := evs[len(evs)-1].Err.(*llm.Error); e.Class != llm.ClassFatal || e.Resend {
			t.Fatalf("want fatal, got %s", dump(evs))
		}
	})
}

// TestResendUnderOtherName: a rejected max_tokens is sent as
// max_completion_tokens from then on (OpenAI reasoning models behind an
// alias), and the reverse (servers that know only max_tokens); the value
// the task asked for stays. Both names rejected is fatal, not a ping-pong.
func TestResendUnderOtherName(t *testing.T) {
	t.Parallel()
	maxTokens := jsonError(400, `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`)
	maxCompletion := jsonError(400, `{"error":{"message":"Unrecognized request argument supplied: max_completion_tokens","type":"invalid_request_error","param":null,"code":null}}`)
	for _, c := range []struct {
		name, model, from, to string
		reject                llmtest.Reply
	}{
		{"max_tokens to max_completion_tokens", "my-gateway-alias", "max_tokens", "max_completion_tokens", maxTokens},
		{"max_completion_tokens to max_tokens", "gpt-5-mini", "max_completion_tokens", "max_tokens", maxCompletion},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, c.reject, llmtest.Text("ok"), llmtest.Text("again"))
			p := mustNew(t, llm.Config{BaseURL: srv.URL(), HTTPClient: srv.Client(), Profile: &llm.Profile{}})
			req := llm.Request{Model: c.model, MaxOutputTokens: 123}
			first := collect(t, p, req)
			if e, ok := first[len(first)-1].Err.(*llm.Error); !ok || !e.Resend || !strings.Contains(e.Error(), "with "+c.to+" instead of "+c.from) {
				t.Fatalf("want a resend under %s, got %s", c.to, dump(first))
			}
			for _, want := range []string{"ok", "again"} {
				if v := view(collect(t, p, req)); v.Text != want {
					t.Fatalf("after the rename: %+v", v)
				}
			}
			reqs := srv.Requests()
			if reqs[0].Body[c.from] != float64(123) {
				t.Fatalf("first request: %s", reqs[0].Raw)
			}
			for _, r := range reqs[1:] {
				if _, ok := r.Body[c.from]; ok || r.Body[c.to] != float64(123) {
					t.Errorf("a later request sends %s or lacks %s: 123: %s", c.from, c.to, r.Raw)
				}
			}
		})
	}
	t.Run("both names rejected", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t, maxTokens, maxCompletion)
		p := mustNew(t, llm.Config{BaseURL: srv.URL(), HTTPClient: srv.Client(), Profile: &llm.Profile{}})
		req := llm.Request{Model: "alias", MaxOutputTokens: 5}
		if v := view(collect(t, p, req)); v.Class != llm.ClassRetryable {
			t.Fatalf("first: %+v", v)
		}
		second := collect(t, p, req)
		if e := second[len(second)-1].Err.(*llm.Error); e.Class != llm.ClassFatal || e.Resend {
			t.Fatalf("the other name rejected too: want fatal, got %s", dump(second))
		}
	})
}
