package llm_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// streamer is what the wire tests drive: a provider of any wire.
type streamer interface {
	Stream(ctx context.Context, req llm.Request) iter.Seq[llm.Event]
}

// stepResult is one model call as the runner would fold it.
type stepResult struct {
	events []llm.Event
	msg    llm.Message // the assistant message
	finish *llm.Event  // finish-step, nil after an error
	err    *llm.Error
}

// callOnce streams one request and folds its events into an assistant
// message, as the runner's processor does (text, reasoning, tool calls,
// ReasoningDetails from finish-step).
func callOnce(t *testing.T, p streamer, req llm.Request) stepResult {
	t.Helper()
	var r stepResult
	r.msg.Role = llm.RoleAssistant
	var text, reasoning strings.Builder
	for ev := range p.Stream(t.Context(), req) {
		r.events = append(r.events, ev)
		switch ev.Type {
		case llm.EventTextDelta:
			text.WriteString(ev.Delta)
		case llm.EventReasoningDelta:
			reasoning.WriteString(ev.Delta)
		case llm.EventToolCall:
			r.msg.ToolCalls = append(r.msg.ToolCalls, *ev.ToolCall)
		case llm.EventFinishStep:
			e := ev
			r.finish = &e
			r.msg.ReasoningDetails = ev.ReasoningDetails
		case llm.EventError:
			r.err, _ = ev.Err.(*llm.Error)
		}
	}
	if err := llm.CheckSequence(r.events); err != nil {
		t.Fatalf("%v\n%s", err, dump(r.events))
	}
	r.msg.Content, r.msg.Reasoning = text.String(), reasoning.String()
	return r
}

// wireSession runs steps model calls, answering every tool call with result,
// and returns each step's result. The conversation starts with system and
// one user prompt.
func wireSession(t *testing.T, p streamer, model, system string, tools []llm.ToolDef, steps int, result func(llm.ToolCall) string) []stepResult {
	t.Helper()
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: "Fix the failing test in ./calc."}}
	var out []stepResult
	for range steps {
		r := callOnce(t, p, llm.Request{Model: model, Messages: msgs, Tools: tools})
		out = append(out, r)
		if r.err != nil {
			t.Fatalf("step %d: %v", len(out), r.err)
		}
		msgs = append(msgs, r.msg)
		for _, tc := range r.msg.ToolCalls {
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Content: result(tc)})
		}
	}
	return out
}

// agentTools are tool definitions the size of the runner's.
func agentTools() []llm.ToolDef {
	var out []llm.ToolDef
	for _, name := range []string{"bash", "edit", "glob", "grep", "list", "read", "write"} {
		out = append(out, llm.ToolDef{Name: name,
			Description: strings.Repeat("Use "+name+" to work with the repository; paths are relative to the work tree. ", 12),
			Parameters:  []byte(`{"type":"object","properties":{"path":{"type":"string","description":"a path"},"command":{"type":"string"}},"required":["path"]}`)})
	}
	return out
}

// agentSystem is a system prompt the size of the runner's.
func agentSystem() string {
	return strings.Repeat("You are a coding agent working headless in a Git repository. Keep changes minimal. ", 60)
}

// threeSteps runs the 3-step tool session every wire's test runs (see
// wireSession) and checks what all share: the fake's personality rejected
// nothing and the finish reasons are tool-calls, tool-calls, stop.
func threeSteps(t *testing.T, p streamer, model string, rejections func() []string) []stepResult {
	t.Helper()
	steps := wireSession(t, p, model, agentSystem(), agentTools(), 3,
		func(tc llm.ToolCall) string { return "contents of " + string(tc.Arguments) })
	if r := rejections(); len(r) > 0 {
		t.Fatalf("the fake's personality rejected: %v", r)
	}
	if got := []llm.FinishReason{steps[0].finish.FinishReason, steps[1].finish.FinishReason, steps[2].finish.FinishReason}; fmt.Sprint(got) != "[tool-calls tool-calls stop]" {
		t.Errorf("finish reasons %v", got)
	}
	return steps
}

// mustNative fails the test on a provider constructor's error.
func mustNative(t testing.TB, p *llm.NativeProvider, err error) *llm.NativeProvider {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newAnthropic(t testing.TB, srv *llmtest.AnthropicServer) *llm.NativeProvider {
	t.Helper()
	p, err := llm.NewAnthropic(llm.Config{BaseURL: srv.URL(), APIKey: "sk-ant-test", HTTPClient: srv.Client()})
	return mustNative(t, p, err)
}

func turn(t llmtest.AnthropicTurn) llmtest.AnthropicStep { return llmtest.AnthropicStep{Turn: t} }

func newResponses(t testing.TB, srv *llmtest.ResponsesServer) *llm.NativeProvider {
	t.Helper()
	p, err := llm.NewResponses(llm.Config{BaseURL: srv.URL(), APIKey: "sk-test", HTTPClient: srv.Client()})
	return mustNative(t, p, err)
}

func rturn(t llmtest.ResponsesTurn) llmtest.ResponsesStep { return llmtest.ResponsesStep{Turn: t} }
