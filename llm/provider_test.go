package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

func ptr[T any](v T) *T { return &v }

func TestRequestBody(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Text("ok"))
	p, err := llm.New(llm.Config{
		BaseURL: srv.URL(), APIKey: "sk-test", HTTPClient: srv.Client(),
		Headers: map[string]string{"HTTP-Referer": "https://example.test"},
		Profile: &llm.Profile{}, // unadapted: the body as built (profiles: profile_test.go)
	})
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{
		Model: "o4-mini",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "sys"},
			{Role: llm.RoleUser, Content: "hi"},
			{Role: llm.RoleAssistant, Reasoning: "thinking", ReasoningDetails: json.RawMessage(`[{"type":"reasoning.text","text":"t"}]`),
				ToolCalls: []llm.ToolCall{
					{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`), ProviderMetadata: json.RawMessage(`{"google":{"thought_signature":"sig"}}`)},
					{ID: "c2", Name: "bash", ArgumentsInvalid: true, ArgumentsRaw: `{"cmd":`},
				}},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: "file a"},
		},
		Tools:           []llm.ToolDef{{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}, {Name: "bash"}},
		ToolChoice:      llm.ToolChoiceRequired,
		Temperature:     ptr(0.0),
		TopP:            ptr(0.5),
		MaxOutputTokens: 1000,
		ReasoningEffort: "low",
	}
	events := collect(t, p, req)
	checkSequence(t, events)
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
		t.Errorf("sent %s %s", r.Method, r.Path)
	}
	if r.Header.Get("Authorization") != "Bearer sk-test" || r.Header.Get("HTTP-Referer") != "https://example.test" {
		t.Errorf("headers: %v", r.Header)
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(`{
		"model": "o4-mini", "stream": true, "stream_options": {"include_usage": true},
		"messages": [
			{"role": "system", "content": "sys"},
			{"role": "user", "content": "hi"},
			{"role": "assistant", "content": "", "reasoning_details": [{"type":"reasoning.text","text":"t"}], "tool_calls": [
				{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}, "extra_content": {"google":{"thought_signature":"sig"}}},
				{"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\":"}}
			]},
			{"role": "tool", "content": "file a", "tool_call_id": "c1"}
		],
		"tools": [
			{"type": "function", "function": {"name": "read", "description": "Read a file.", "parameters": {"type":"object","properties":{"path":{"type":"string"}}}}},
			{"type": "function", "function": {"name": "bash", "parameters": {"type":"object","properties":{}}}}
		],
		"tool_choice": "required", "temperature": 0, "top_p": 0.5,
		"max_completion_tokens": 1000, "reasoning_effort": "low"
	}`), &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, r.Body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestSendReasoningContent(t *testing.T) {
	t.Parallel()
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "q"}, {Role: llm.RoleAssistant, Content: "a", Reasoning: "because"}}
	for _, send := range []bool{false, true} {
		srv := llmtest.NewServer(t, llmtest.Text("ok"))
		p, err := llm.New(llm.Config{BaseURL: srv.URL(), HTTPClient: srv.Client(), SendReasoningContent: send})
		if err != nil {
			t.Fatal(err)
		}
		collect(t, p, llm.Request{Model: "deepseek-reasoner", Messages: msgs})
		got, ok := srv.Requests()[0].Messages()[1]["reasoning_content"]
		if ok != send || (send && got != "because") {
			t.Errorf("send=%v: reasoning_content = %v (present %v)", send, got, ok)
		}
	}
}

func TestRequestOmitsUnset(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Text("ok"))
	collect(t, newProvider(t, srv, 0), llm.Request{Model: "llama3", ToolChoice: llm.ToolChoiceNone, MaxOutputTokens: 7})
	body := srv.Requests()[0].Body
	for _, k := range []string{"temperature", "top_p", "tools", "tool_choice", "reasoning_effort", "max_completion_tokens"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent though unset", k)
		}
	}
	if body["max_tokens"] != 7.0 {
		t.Errorf("max_tokens = %v", body["max_tokens"])
	}
}

func TestAzure(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Text("ok"))
	p, err := llm.New(llm.Config{APIKey: "az-key", HTTPClient: srv.Client(), Azure: &llm.AzureConfig{
		Endpoint: strings.TrimSuffix(srv.URL(), "/v1"), APIVersion: "2024-10-21",
		Deployments: map[string]string{"gpt-4.1": "prod-41"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	checkSequence(t, collect(t, p, llm.Request{Model: "gpt-4.1"}))
	r := srv.Requests()[0]
	if r.Path != "/openai/deployments/prod-41/chat/completions" || r.Query != "api-version=2024-10-21" {
		t.Errorf("sent to %s?%s", r.Path, r.Query)
	}
	if r.Header.Get("api-key") != "az-key" || r.Header.Get("Authorization") != "" {
		t.Errorf("auth headers: %v", r.Header)
	}
}

func TestFailureModes(t *testing.T) {
	t.Parallel()
	body := string(llmtest.Turn{Text: "one two three four five six"}.SSE())
	tests := []struct {
		name  string
		reply llmtest.Reply
		idle  time.Duration
		class llm.ErrorClass
		is    error
	}{
		{"stall mid-stream", llmtest.Reply{Body: []byte(body), Stall: true, StallAfter: 400}, 200 * time.Millisecond, llm.ClassRetryable, llm.ErrIdleTimeout},
		{"no first byte", llmtest.Reply{Body: []byte(body), Delay: 5 * time.Second}, 200 * time.Millisecond, llm.ClassRetryable, llm.ErrIdleTimeout},
		{"cut connection", llmtest.Reply{Body: []byte(body), Cut: true, CutAfter: 400}, 0, llm.ClassRetryable, llm.ErrIncompleteStream},
		{"cut before finish", llmtest.Reply{Body: []byte(body), Cut: true, CutAfter: strings.Index(body, `"finish_reason":"stop"`) - 100}, 0, llm.ClassRetryable, llm.ErrIncompleteStream},
		{"cut before headers end", llmtest.Reply{Body: []byte(body), Cut: true, CutAfter: 0}, 0, llm.ClassRetryable, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, tt.reply)
			events := collect(t, newProvider(t, srv, tt.idle), llm.Request{Model: "m"})
			checkSequence(t, events)
			e := lastError(t, events)
			if e.Class != tt.class || (tt.is != nil && !errors.Is(e, tt.is)) {
				t.Errorf("got %v (%s), want class %s is %v", e, e.Class, tt.class, tt.is)
			}
		})
	}
}

func TestDelayWithinIdleTimeout(t *testing.T) {
	t.Parallel()
	r := llmtest.Text("late but fine")
	r.Delay = 50 * time.Millisecond
	srv := llmtest.NewServer(t, r)
	events := collect(t, newProvider(t, srv, 30*time.Second), llm.Request{Model: "m"}) // far above the delay, on a loaded machine too
	if s := summarize(events); s["text"] != "late but fine" || s["finish_reason"] != "stop" {
		t.Errorf("got %v", s)
	}
}

func TestSlowConsumerIsNotIdle(t *testing.T) {
	t.Parallel()
	body := llmtest.Turn{Text: "one two three"}.SSE()
	first := bytes.Index(body, []byte("one ")) + 200 // just after the first text chunk
	srv := llmtest.NewServer(t, llmtest.Reply{Body: body, Pause: 100 * time.Millisecond, PauseAfter: first})
	p := newProvider(t, srv, 500*time.Millisecond)
	var events []llm.Event
	for ev := range p.Stream(t.Context(), llm.Request{Model: "m"}) {
		events = append(events, ev)
		if ev.Type == llm.EventTextDelta {
			time.Sleep(700 * time.Millisecond) // longer than the idle timeout
		}
	}
	if s := summarize(events); s["finish_reason"] != "stop" || s["text"] != "one two three" {
		t.Errorf("got %v", s)
	}
}

func TestCutAfterFinishIsComplete(t *testing.T) {
	t.Parallel()
	body := string(llmtest.Turn{Text: "done"}.SSE())
	cut := strings.Index(body, `"usage":{`) // inside the usage chunk
	srv := llmtest.NewServer(t, llmtest.Reply{Body: []byte(body), Cut: true, CutAfter: cut})
	events := collect(t, newProvider(t, srv, 0), llm.Request{Model: "m"})
	if s := summarize(events); s["finish_reason"] != "stop" || s["text"] != "done" {
		t.Errorf("got %v", s)
	}
}

// closeSpy records whether response bodies were closed.
type closeSpy struct {
	base   http.RoundTripper
	closed atomic.Int32
}

func (c *closeSpy) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		resp.Body = &spyBody{ReadCloser: resp.Body, spy: c}
	}
	return resp, err
}

type spyBody struct {
	io.ReadCloser
	spy *closeSpy
}

func (b *spyBody) Close() error { b.spy.closed.Add(1); return b.ReadCloser.Close() }

func TestEarlyBreakClosesBody(t *testing.T) {
	t.Parallel()
	body := llmtest.Turn{Text: "a b c d e f g h"}.SSE()
	srv := llmtest.NewServer(t, llmtest.Reply{Body: body, Stall: true, StallAfter: len(body) / 2})
	spy := &closeSpy{base: srv.Client().Transport}
	p, err := llm.New(llm.Config{BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: spy}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ev := range p.Stream(t.Context(), llm.Request{Model: "m"}) {
		if ev.Type == llm.EventTextDelta {
			n++
			break
		}
	}
	if n != 1 || spy.closed.Load() != 1 {
		t.Errorf("deltas %d, bodies closed %d; want 1 and 1", n, spy.closed.Load())
	}
}

func TestCallerCancel(t *testing.T) {
	t.Parallel()
	body := llmtest.Turn{Text: "a b c"}.SSE()
	srv := llmtest.NewServer(t, llmtest.Reply{Body: body, Stall: true, StallAfter: len(body) / 2})
	p := newProvider(t, srv, 0)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var events []llm.Event
	for ev := range p.Stream(ctx, llm.Request{Model: "m"}) {
		events = append(events, ev)
		if ev.Type == llm.EventTextDelta {
			cancel()
		}
	}
	e := lastError(t, events)
	if !errors.Is(e, context.Canceled) || e.Class != llm.ClassFatal {
		t.Errorf("got %v (%s), want fatal wrapping context.Canceled", e, e.Class)
	}
	checkSequence(t, events)
}

func TestTurnBuilder(t *testing.T) {
	t.Parallel()
	turn := llmtest.Turn{
		Reasoning: "plan it", Text: "Reading two files.",
		ToolCalls: []llmtest.ToolCall{
			llmtest.Call("read", `{"path":"a.go"}`),
			{ID: "g1", Name: "list", Arguments: `{"dir":"."}`, ExtraContent: json.RawMessage(`{"google":{"thought_signature":"s"}}`)},
		},
		Usage: &llmtest.Usage{PromptTokens: 50, CompletionTokens: 20, CachedTokens: 10, ReasoningTokens: 5},
	}
	srv := llmtest.NewServer(t, turn.Reply())
	events := streamAll(t, srv, llm.Request{Model: "m", Tools: []llm.ToolDef{{Name: "read"}, {Name: "list"}}})
	checkSequence(t, events)
	got := summarize(events)
	want := map[string]any{
		"text": "Reading two files.", "reasoning": "plan it", "finish_reason": "tool-calls", "error": nil,
		"usage": map[string]any{"prompt_tokens": 50.0, "completion_tokens": 20.0, "total_tokens": 70.0, "cached_prompt_tokens": 10.0, "reasoning_tokens": 5.0},
		"tool_calls": []any{
			map[string]any{"id": "call_1", "name": "read", "name_as_sent": "read", "arguments": map[string]any{"path": "a.go"}},
			map[string]any{"id": "g1", "name": "list", "name_as_sent": "list", "arguments": map[string]any{"dir": "."},
				"provider_metadata": map[string]any{"google": map[string]any{"thought_signature": "s"}}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	deltas := 0
	for _, ev := range events {
		if ev.Type == llm.EventToolInputDelta {
			deltas++
		}
	}
	if deltas < 4 {
		t.Errorf("tool input arrived in %d deltas, want it split", deltas)
	}
}

func TestServerHandlerAndUnscripted(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServerFunc(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		return llmtest.Text("model was " + r.Body["model"].(string))
	})
	if s := summarize(streamAll(t, srv, llm.Request{Model: "x1"})); s["text"] != "model was x1" {
		t.Errorf("handler reply: %v", s)
	}
	rt := &recordingTB{TB: t}
	srv2 := llmtest.NewServer(rt, llmtest.Text("only one"))
	p := newProvider(t, srv2, 0)
	collect(t, p, llm.Request{Model: "m"})
	e := lastError(t, collect(t, p, llm.Request{Model: "m"}))
	if e.Class != llm.ClassFatal || !strings.Contains(e.Message, "request 2 arrived but only 1 replies were scripted") {
		t.Errorf("unscripted: %v", e)
	}
	if len(rt.errs.Load().([]string)) != 1 {
		t.Errorf("server did not fail the test")
	}
}

// recordingTB captures Errorf so a test can check that the fake server
// reports unscripted requests.
type recordingTB struct {
	testing.TB
	errs atomic.Value
}

func (r *recordingTB) Errorf(format string, args ...any) {
	prev, _ := r.errs.Load().([]string)
	r.errs.Store(append(prev, format))
}

func TestNewConfigErrors(t *testing.T) {
	t.Parallel()
	for _, cfg := range []llm.Config{{BaseURL: "localhost:8080"}, {Azure: &llm.AzureConfig{}}} {
		if _, err := llm.New(cfg); !errors.Is(err, llm.ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
	p, err := llm.New(llm.Config{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if e := lastError(t, collect(t, p, llm.Request{})); !errors.Is(e, llm.ErrBadRequest) || e.Class != llm.ClassFatal {
		t.Errorf("no model: %v", e)
	}
}

func TestReasoningDetailsMerged(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile("testdata/cases/21-openrouter-reasoning-details.sse")
	if err != nil {
		t.Fatal(err)
	}
	events := streamAll(t, llmtest.NewServer(t, llmtest.Reply{Body: body}), llm.Request{Model: "m"})
	last := events[len(events)-1]
	want := `[{"format":"google-gemini-v1","index":0,"text":"**Planning** I will list the files first.","type":"reasoning.text"}]`
	if last.Type != llm.EventFinishStep || string(last.ReasoningDetails) != want {
		t.Errorf("reasoning details %s, want %s", last.ReasoningDetails, want)
	}
}

// TestHeartbeatsAfterFinish: a server that keeps the connection open with
// heartbeats after the reply's end, sending neither [DONE] nor
// message_stop, cannot hold the step (maximhq/bifrost#6784,
// diegosouzapw/OmniRoute#6777). The server never ends the response; only
// the client can end the step.
func TestHeartbeatsAfterFinish(t *testing.T) {
	t.Parallel()
	forever := func(head, beat string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, head)
			w.(http.Flusher).Flush()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := io.WriteString(w, beat); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	anthStart := `{"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":9,"output_tokens":1}}}`
	for _, tc := range []struct {
		name, head, beat, wire string
		want                   replyView
	}{
		{"chat: SSE comments after the finish chunk", "data: " + content("Hi") + "\n\ndata: " + finish(`"stop"`) + "\n\n", ": keep-alive\n\n", "chat",
			replyView{Text: "Hi", Finish: llm.FinishStop}},
		{"chat: empty data events after the finish chunk", "data: " + content("Hi") + "\n\ndata: " + finish(`"stop"`) + "\n\n", "data: \n\n", "chat",
			replyView{Text: "Hi", Finish: llm.FinishStop}},
		{"chat: heartbeats after finish_reason error", "data: " + content("Hi") + "\n\ndata: " + finish(`"error"`) + "\n\n", ": keep-alive\n\n", "chat",
			replyView{Text: "Hi", Class: llm.ClassRetryable}},
		{"anthropic: pings after message_delta", sseEventsText(anthStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`),
			"event: ping\ndata: {\"type\":\"ping\"}\n\n", "anthropic", replyView{Text: "Hi", Class: llm.ClassRetryable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := forever(tc.head, tc.beat)
			// A regression hangs; the deadline turns it into a failure.
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cfg := llm.Config{BaseURL: srv.URL + "/v1", APIKey: "k", HTTPClient: srv.Client(), IdleTimeout: time.Minute}
			var s interface {
				Stream(context.Context, llm.Request) iter.Seq[llm.Event]
			}
			var err error
			if tc.wire == "anthropic" {
				s, err = llm.NewAnthropic(cfg)
			} else {
				s, err = llm.New(cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			var events []llm.Event
			for ev := range s.Stream(ctx, llm.Request{Model: "m"}) {
				events = append(events, ev)
			}
			if ctx.Err() != nil {
				t.Fatalf("the step did not end while the server kept sending heartbeats: %s", dump(events))
			}
			checkSequence(t, events)
			got := view(events)
			got.Usage = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
