package llm_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// bodyTransport answers every request with a 200 SSE body.
type bodyTransport string

func (b bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(string(b))), Request: req}, nil
}

// FuzzNativeStreams feeds arbitrary bodies to both native wires: whatever
// arrives, the events keep the stream contract (CheckSequence) and a
// tool call has a name or an id.
func FuzzNativeStreams(f *testing.F) {
	calls := []llmtest.ToolCall{{Name: "read", Arguments: `{"path":"a"}`}, {Name: "grep", Arguments: `{"pattern":"x"}`}}
	for _, turn := range []llmtest.AnthropicTurn{{Thinking: "t", RedactedThinking: "r", Text: "x", ToolCalls: calls}, {Text: "cut", CutBeforeStop: true}} {
		f.Add(string(turn.SSE()))
	}
	for _, turn := range []llmtest.ResponsesTurn{{Reasoning: "r", Text: "x", ToolCalls: calls}, {Text: "x", Incomplete: "max_output_tokens"}, {FailedCode: "server_error"}} {
		f.Add(string(turn.SSE()))
	}
	f.Add("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n")
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}},
		Tools: []llm.ToolDef{{Name: "read"}, {Name: "grep"}}}
	f.Fuzz(func(t *testing.T, body string) {
		cfg := llm.Config{BaseURL: "http://fuzz/v1", APIKey: "k", HTTPClient: &http.Client{Transport: bodyTransport(body)}}
		for _, w := range []llm.Wire{llm.WireAnthropic, llm.WireResponses} {
			p, err := llm.NewWire(w, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var events []llm.Event
			for ev := range p.Stream(t.Context(), req) {
				events = append(events, ev)
				if ev.Type == llm.EventToolCall && ev.ToolCall.ID == "" && ev.ToolCall.Name == "" {
					t.Fatalf("%s: a tool call with neither id nor name", w)
				}
			}
			if err := llm.CheckSequence(events); err != nil {
				t.Fatalf("%s: %v", w, err)
			}
		}
	})
}
