// Package llm talks to the model over one of three wires (Chat Completions
// and every compatible endpoint, OpenAI's Responses API, Anthropic's
// Messages API; see Wire and docs/providers.md) and turns one streamed
// model call into a sequence of unified stream events (after the AI SDK's
// fullStream, as used by OpenCode's session processor).
//
// It knows nothing of tool implementations, of GitHub or of the pipeline:
// tools arrive as definitions (name, description, JSON Schema) and tool calls
// leave as data. Retrying is the caller's job; this package classifies
// errors (see Error and ErrorClass).
//
// Imports: go-openai, aws-sdk-go-v2's event-stream decoder (Bedrock), the
// standard library, internal/httpguard (outside the layers) and secret (its
// redaction mark, below every package).
package llm

import (
	"encoding/json"
	"errors"
	"time"
)

// Role is the author of a message.
type Role string

// Message roles, as in the Chat Completions API.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the conversation sent to the model.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// Reasoning is the assistant's reasoning text, kept with the turn.
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningDetails is a provider's structured reasoning (OpenRouter's
	// reasoning_details), kept verbatim so it can be sent back.
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is one complete tool call from the model.
type ToolCall struct {
	ID string `json:"id"`
	// Name is the resolved name of a registered tool (exact match, else a
	// unique case-insensitive match), or the name as sent when none matched.
	Name string `json:"name"`
	// NameAsSent is the name exactly as the model sent it.
	NameAsSent string `json:"name_as_sent,omitempty"`
	// Arguments is the parsed JSON object ({} when the model sent none);
	// nil when ArgumentsInvalid.
	Arguments json.RawMessage `json:"arguments"`
	// ArgumentsRaw is the text as received, kept when it was not valid JSON.
	ArgumentsRaw string `json:"arguments_raw,omitempty"`
	// ArgumentsInvalid marks arguments that are not a valid JSON value; such
	// a call must not run: the model gets an error result instead.
	ArgumentsInvalid bool `json:"arguments_invalid,omitempty"`
	// ProviderMetadata holds vendor extras to send back with the call on the
	// next request (for example Gemini's extra_content.google.thought_signature).
	ProviderMetadata json.RawMessage `json:"provider_metadata,omitempty"`
}

// ToolDef is a tool offered to the model.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema of the arguments object
}

// ToolChoice tells the model whether it may, must or must not call tools.
type ToolChoice string

// Tool choices.
const (
	ToolChoiceAuto     ToolChoice = "auto"
	ToolChoiceRequired ToolChoice = "required"
	ToolChoiceNone     ToolChoice = "none"
)

// Request is one model call.
type Request struct {
	Model           string
	Messages        []Message
	Tools           []ToolDef
	ToolChoice      ToolChoice // "" means auto when tools are given
	Temperature     *float64
	TopP            *float64
	MaxOutputTokens int    // 0: provider default
	ReasoningEffort string // "": not sent
}

// EventType names a unified stream event.
type EventType string

// Unified stream events, emitted in order, each exactly once per part.
const (
	EventStart          EventType = "start"
	EventTextStart      EventType = "text-start"
	EventTextDelta      EventType = "text-delta"
	EventTextEnd        EventType = "text-end"
	EventReasoningStart EventType = "reasoning-start"
	EventReasoningDelta EventType = "reasoning-delta"
	EventReasoningEnd   EventType = "reasoning-end"
	EventToolInputStart EventType = "tool-input-start"
	EventToolInputDelta EventType = "tool-input-delta"
	EventToolInputEnd   EventType = "tool-input-end"
	EventToolCall       EventType = "tool-call"
	EventFinishStep     EventType = "finish-step"
	EventError          EventType = "error"
)

// Event is one unified stream event. Which fields are set depends on Type:
//   - text-*, reasoning-*: ID (the part), Delta (for -delta);
//   - tool-input-*: ID (the call id), ToolName (as sent), Delta (argument text);
//   - tool-call: ToolCall;
//   - finish-step: FinishReason, Usage (nil when the provider sent none),
//     ReasoningDetails, Model;
//   - error: Err (an *Error); nothing follows it.
type Event struct {
	Type             EventType
	ID               string
	Delta            string
	ToolName         string
	ToolCall         *ToolCall
	FinishReason     FinishReason
	Usage            *Usage
	ReasoningDetails json.RawMessage
	// Model is the model the provider says answered (a dated snapshot of
	// the one asked for, or a gateway's choice); "" when it named none.
	Model string
	Err   error
}

// FinishReason is why the model stopped, normalised across providers.
type FinishReason string

// Finish reasons.
const (
	FinishStop          FinishReason = "stop"
	FinishToolCalls     FinishReason = "tool-calls"
	FinishLength        FinishReason = "length"
	FinishContentFilter FinishReason = "content-filter"
	FinishError         FinishReason = "error"
	FinishUnknown       FinishReason = "unknown"
	// FinishPaused is Anthropic's pause_turn: the provider paused a long
	// turn, which goes back as it is, with nothing after it, to resume.
	FinishPaused FinishReason = "paused"
)

// Usage counts tokens of one model call.
type Usage struct {
	InputTokens       int64 `json:"input"`       // all prompt tokens, cached ones included
	OutputTokens      int64 `json:"output"`      // completion tokens, reasoning included
	ReasoningTokens   int64 `json:"reasoning"`   // part of OutputTokens
	CachedInputTokens int64 `json:"cache_read"`  // part of InputTokens served from cache
	CacheWriteTokens  int64 `json:"cache_write"` // where the provider reports it
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + o.InputTokens,
		OutputTokens:      u.OutputTokens + o.OutputTokens,
		ReasoningTokens:   u.ReasoningTokens + o.ReasoningTokens,
		CachedInputTokens: u.CachedInputTokens + o.CachedInputTokens,
		CacheWriteTokens:  u.CacheWriteTokens + o.CacheWriteTokens,
	}
}

// ErrorClass says what the caller should do about a failed model call.
type ErrorClass string

// Error classes.
const (
	ClassRetryable       ErrorClass = "retryable"        // try again after RetryAfter or a backoff
	ClassContextOverflow ErrorClass = "context-overflow" // compact the history, then try again
	ClassFatal           ErrorClass = "fatal"            // give up
)

// Error is a classified provider error, from an HTTP status or from inside
// a stream.
type Error struct {
	Class      ErrorClass
	Status     int           // HTTP status; 0 for in-stream errors
	Code       string        // provider code, normalised to a string
	Type       string        // provider error type
	Message    string        // provider message
	RetryAfter time.Duration // server-given delay; 0 when none
	// Resend marks a request the provider has already changed to avoid
	// this error (it dropped a member the endpoint rejected): retry at once.
	Resend bool
	// Unreachable marks an endpoint that cannot be reached and will not
	// come up by waiting: its name does not resolve, or nothing listens on
	// its loopback port. Retried once, not for the whole backoff.
	Unreachable bool
	// Request is the failed call's "METHOD URL", the URL without query or
	// user info; "" when unknown.
	Request string
	// Hint is what to check, when the status suggests it ("" when none).
	Hint string
	Err  error // underlying cause, if any
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	kind := "provider error"
	if errors.Is(e.Err, ErrCassetteExhausted) || errors.Is(e.Err, ErrCassetteMismatch) {
		kind = "replay error" // the cassette answered, not a provider
	}
	s := kind + " (" + string(e.Class)
	if e.Status != 0 {
		s += ", HTTP " + itoa(e.Status)
	}
	if e.Code != "" {
		s += ", " + e.Code
	}
	s += ")"
	if e.Request != "" {
		s += " from " + e.Request
	}
	s += ": " + msg
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
