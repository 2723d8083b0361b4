package llmtest_test

import (
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestResponsesFakeWithOfficialSDK reads the fake's Responses stream with
// OpenAI's own Go SDK: every event decodes as the SDK's union, the
// sequence numbers count up, and the terminal response.completed carries
// the reasoning item with its encrypted content, the message text, both
// function calls and the cached tokens; its error type carries a 500.
func TestResponsesFakeWithOfficialSDK(t *testing.T) {
	t.Parallel()
	serverError := llmtest.OpenAIError(500, "server_error", "", "", "The server had an error.")
	srv := llmtest.NewResponsesServer(t,
		llmtest.ResponsesStep{Turn: llmtest.ResponsesTurn{Reasoning: "Read both.", EncryptedContent: "gAAAAB-sdk", Text: "Reading.",
			ToolCalls: []llmtest.ToolCall{{ID: "call_a", Name: "read", Arguments: `{"path":"a.go"}`}, {ID: "call_b", Name: "read", Arguments: `{"path":"b.go"}`}}}},
		llmtest.ResponsesStep{Raw: &serverError},
	)
	client := openai.NewClient(option.WithBaseURL(srv.URL()), option.WithAPIKey("sk-sdk"), option.WithHTTPClient(srv.Client()), option.WithMaxRetries(0))
	params := responses.ResponseNewParams{Model: "gpt-5.1-codex", Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Read a.go and b.go")}}
	stream := client.Responses.NewStreaming(t.Context(), params)
	var final *responses.Response
	seq := int64(0)
	var deltas string
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != seq {
			t.Errorf("event %s: sequence_number %d, want %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq++
		switch e := ev.AsAny().(type) {
		case responses.ResponseTextDeltaEvent:
			deltas += e.Delta
		case responses.ResponseCompletedEvent:
			final = &e.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if r := srv.Rejections(); len(r) > 0 {
		t.Fatalf("the fake rejected the SDK's request: %v", r)
	}
	if final == nil {
		t.Fatal("no response.completed")
	}
	out := final.Output
	if deltas != "Reading." || final.OutputText() != "Reading." || len(out) != 4 ||
		out[0].Type != "reasoning" || out[0].EncryptedContent != "gAAAAB-sdk" || len(out[0].Summary) != 1 ||
		out[2].Type != "function_call" || out[2].CallID != "call_a" || out[3].Arguments.OfString != `{"path":"b.go"}` {
		t.Errorf("output %+v", out)
	}
	if final.Usage.InputTokens == 0 || final.Usage.OutputTokens == 0 {
		t.Errorf("usage %+v", final.Usage)
	}

	_, err := client.Responses.New(t.Context(), params)
	var apiErr *openai.Error
	if !asError(err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Code != "" {
		t.Errorf("500: %v", err)
	}
}
