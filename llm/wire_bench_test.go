package llm_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// stripBreakpoints is a transport that sends each request without its
// cache_control members: the same session with caching off.
type stripBreakpoints struct{ next http.RoundTripper }

func (s stripBreakpoints) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	body = bytes.ReplaceAll(body, []byte(`,"cache_control":{"type":"ephemeral"}`), nil)
	req = req.Clone(req.Context())
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return s.next.RoundTrip(req)
}

// sessionSteps is the length of the benchmarked session.
const sessionSteps = 30

// benchSession runs a 30-step tool session (each tool result about 1,000
// tokens) against a fake and returns its usage summed.
func benchSession(b *testing.B, p streamer) llm.Usage {
	b.Helper()
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: agentSystem()}, {Role: llm.RoleUser, Content: "Fix the failing test in ./calc."}}
	var total llm.Usage
	for range sessionSteps {
		var msg llm.Message
		msg.Role = llm.RoleAssistant
		var text strings.Builder
		for ev := range p.Stream(b.Context(), llm.Request{Model: "m", Messages: msgs, Tools: agentTools()}) {
			switch ev.Type {
			case llm.EventTextDelta:
				text.WriteString(ev.Delta)
			case llm.EventToolCall:
				msg.ToolCalls = append(msg.ToolCalls, *ev.ToolCall)
			case llm.EventFinishStep:
				msg.ReasoningDetails = ev.ReasoningDetails
				if ev.Usage != nil {
					total = total.Add(*ev.Usage)
				}
			case llm.EventError:
				b.Fatal(ev.Err)
			}
		}
		msg.Content = text.String()
		msgs = append(msgs, msg)
		for _, tc := range msg.ToolCalls {
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID,
				Content: strings.Repeat("func Add(a, b int) int { return a - b } // "+tc.ID+"\n", 80)})
		}
	}
	return total
}

func benchCalls(i int) []llmtest.ToolCall {
	return []llmtest.ToolCall{{Name: "read", Arguments: fmt.Sprintf(`{"path":"calc/file%d.go"}`, i)}}
}

// BenchmarkSessionCost prints what a 30-step session costs on each wire
// with and without prompt caching, at the catalog's list prices
// (claude-sonnet-4-5 and gpt-5.1), the tokens counted by the fakes'
// caching rules. Metrics: usd/session and the share of input tokens read
// from the cache.
func BenchmarkSessionCost(b *testing.B) {
	cat := llm.DefaultCatalog()
	report := func(b *testing.B, model string, u llm.Usage) {
		b.Helper()
		cost := cat.Cost(model, u)
		b.ReportMetric(*cost, "usd/session")
		b.ReportMetric(100*float64(u.CachedInputTokens)/float64(u.InputTokens), "%cached")
	}
	for _, cached := range []bool{true, false} {
		name := map[bool]string{true: "cached", false: "uncached"}[cached]
		b.Run("anthropic/"+name, func(b *testing.B) {
			var u llm.Usage
			for b.Loop() {
				var script []llmtest.AnthropicStep
				for i := range sessionSteps {
					script = append(script, llmtest.AnthropicStep{Turn: llmtest.AnthropicTurn{Text: "Reading.", ToolCalls: benchCalls(i), Usage: llmtest.AnthropicUsage{OutputTokens: 200}}})
				}
				srv := llmtest.NewAnthropicServer(b, script...)
				rt := srv.Client().Transport
				if !cached {
					rt = stripBreakpoints{next: rt}
				}
				p, err := llm.NewAnthropic(llm.Config{BaseURL: srv.URL(), APIKey: "k", HTTPClient: &http.Client{Transport: rt}})
				if err != nil {
					b.Fatal(err)
				}
				u = benchSession(b, p)
			}
			report(b, "claude-sonnet-4-5", u)
		})
		b.Run("responses/"+name, func(b *testing.B) {
			var u llm.Usage
			for b.Loop() {
				var script []llmtest.ResponsesStep
				for i := range sessionSteps {
					script = append(script, llmtest.ResponsesStep{Turn: llmtest.ResponsesTurn{Text: "Reading.", ToolCalls: benchCalls(i), Usage: llmtest.ResponsesUsage{OutputTokens: 200}}})
				}
				srv := llmtest.NewResponsesServer(b, script...)
				p, err := llm.NewResponses(llm.Config{BaseURL: srv.URL(), APIKey: "k", HTTPClient: srv.Client()})
				if err != nil {
					b.Fatal(err)
				}
				u = benchSession(b, p)
			}
			if !cached {
				// OpenAI caches by itself; without a cache hit every input
				// token is billed in full.
				u.CachedInputTokens = 0
			}
			report(b, "gpt-5.1", u)
		})
	}
}
