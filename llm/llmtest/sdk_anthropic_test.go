package llmtest_test

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestAnthropicFakeWithOfficialSDK reads the fake's Messages stream with
// Anthropic's own Go SDK: its accumulator must rebuild every block (a
// signed thinking block, a redacted one, text, tool_use input), the
// stop_reason and the usage the fake's caching rule reported, and its
// error type must carry the fake's 529.
func TestAnthropicFakeWithOfficialSDK(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewAnthropicServer(t,
		llmtest.AnthropicStep{Turn: llmtest.AnthropicTurn{Thinking: "Check the file.", Signature: "sig-sdk", RedactedThinking: "cmVk",
			Text: "Reading it.", ToolCalls: []llmtest.ToolCall{{ID: "toolu_sdk", Name: "read", Arguments: `{"path":"a.go"}`}}}},
		llmtest.AnthropicStep{Raw: ptr(llmtest.AnthropicOverloaded())},
	)
	client := anthropic.NewClient(option.WithBaseURL(srv.URL()[:len(srv.URL())-len("/v1")]), option.WithAPIKey("sk-ant-sdk"),
		option.WithHTTPClient(srv.Client()), option.WithMaxRetries(0))
	params := anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Read a.go"))}}
	stream := client.Messages.NewStreaming(t.Context(), params)
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatalf("accumulate: %v", err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if r := srv.Rejections(); len(r) > 0 {
		t.Fatalf("the fake rejected the SDK's request: %v", r)
	}
	var kinds []string
	for _, b := range msg.Content {
		kinds = append(kinds, b.Type)
	}
	if len(msg.Content) != 4 || msg.Content[0].Thinking != "Check the file." || msg.Content[0].Signature != "sig-sdk" ||
		msg.Content[1].Data != "cmVk" || msg.Content[2].Text != "Reading it." ||
		msg.Content[3].ID != "toolu_sdk" || string(msg.Content[3].Input) != `{"path":"a.go"}` {
		t.Errorf("accumulated blocks %v: %+v", kinds, msg.Content)
	}
	if msg.StopReason != anthropic.StopReasonToolUse || msg.Usage.OutputTokens == 0 ||
		msg.Usage.InputTokens+msg.Usage.CacheCreationInputTokens == 0 {
		t.Errorf("stop_reason %q usage %+v", msg.StopReason, msg.Usage)
	}

	_, err := client.Messages.New(t.Context(), params)
	var apiErr *anthropic.Error
	if !asError(err, &apiErr) || apiErr.StatusCode != 529 {
		t.Errorf("529: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
