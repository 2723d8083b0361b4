package llm_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// A scripted cassette replays with no network: the transport is the only
// difference from a live run. With --record, the same Config would use
// llm.NewRecorder(file, nil) as the Transport instead.
func ExampleCassette_RoundTripper() {
	var tape bytes.Buffer
	_ = llm.WriteCassette(&tape, llm.Exchange{
		Request: llm.RecordedRequest{Method: "POST", Path: "/v1/chat/completions"},
		Response: llm.RecordedResponse{Status: 200, Body: string(
			llmtest.Turn{Text: "Hello.", ToolCalls: []llmtest.ToolCall{llmtest.Call("read", `{"path":"go.mod"}`)}}.SSE())},
	})
	cas, err := llm.LoadCassette(&tape)
	if err != nil {
		panic(err)
	}
	p, err := llm.New(llm.Config{BaseURL: "http://replay.invalid/v1", HTTPClient: &http.Client{Transport: cas.RoundTripper()}})
	if err != nil {
		panic(err)
	}
	for ev := range p.Stream(context.Background(), llm.Request{Model: "gpt-4.1-mini", Tools: []llm.ToolDef{{Name: "read"}}}) {
		switch ev.Type {
		case llm.EventTextDelta:
			fmt.Printf("text %q\n", ev.Delta)
		case llm.EventToolCall:
			fmt.Printf("call %s %s\n", ev.ToolCall.Name, ev.ToolCall.Arguments)
		case llm.EventFinishStep:
			fmt.Println("finish", ev.FinishReason, ev.Usage.InputTokens)
		case llm.EventError:
			fmt.Println("error", ev.Err)
		}
	}
	// Output:
	// text "Hello."
	// call read {"path":"go.mod"}
	// finish tool-calls 100
}
