package llm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responsesWire is OpenAI's Responses API (POST /v1/responses, streamed),
// stateless: store is false and reasoning items travel back with their
// encrypted_content. Docs: platform.openai.com/docs/api-reference/responses
// and .../guides/reasoning ("Encrypted reasoning items").
type responsesWire struct{}

// NewResponses returns a provider for the Responses API at cfg.BaseURL
// (the OpenAI default when empty), authenticated with a bearer key.
func NewResponses(cfg Config) (*NativeProvider, error) {
	p, err := newNative(responsesWire{}, cfg, "https://api.openai.com/v1")
	if err == nil {
		p.versionBase = p.baseURL
	}
	return p, err
}

func (responsesWire) path(string) string { return "/responses" }

func (responsesWire) baseVar() string { return "OPENAI_BASE_URL" }

func (responsesWire) header(h http.Header, key string) {
	h.Set("Authorization", "Bearer "+key)
}

func (responsesWire) decoder(a *assembler) streamDecoder { return newResponsesDecoder(a) }

// respRequest is the body; instructions and tools come before the input,
// which only grows, so each step's body starts with the previous one's.
type respRequest struct {
	Model             string            `json:"model"`
	Stream            bool              `json:"stream"`
	Store             bool              `json:"store"`
	Include           []string          `json:"include,omitempty"`
	Reasoning         json.RawMessage   `json:"reasoning,omitempty"`
	MaxOutputTokens   int               `json:"max_output_tokens,omitempty"`
	Temperature       *float64          `json:"temperature,omitempty"`
	TopP              *float64          `json:"top_p,omitempty"`
	ToolChoice        string            `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool             `json:"parallel_tool_calls,omitempty"`
	Tools             []respTool        `json:"tools,omitempty"`
	Instructions      string            `json:"instructions,omitempty"`
	Input             []json.RawMessage `json:"input"`
}

type respTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type respMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type respCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type respOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// reasoningModel reports whether an OpenAI model reasons (and so takes
// reasoning options, returns encrypted reasoning and refuses sampling).
func reasoningModel(model string) bool {
	base := modelBaseName(model)
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return strings.Contains(base, "codex")
}

func (responsesWire) body(req Request) ([]byte, error) {
	if req.Model == "" {
		return nil, fmt.Errorf("%w: no model", ErrBadRequest)
	}
	system, rest := leadingSystem(req.Messages)
	out := respRequest{Model: req.Model, Stream: true, Store: false, Instructions: system,
		MaxOutputTokens: req.MaxOutputTokens, Temperature: req.Temperature, TopP: req.TopP}
	if reasoningModel(req.Model) {
		out.Include = []string{"reasoning.encrypted_content"}
		r := map[string]string{"summary": "auto"}
		if req.ReasoningEffort != "" {
			r["effort"] = req.ReasoningEffort
		}
		out.Reasoning = mustJSON(r)
		out.Temperature, out.TopP = nil, nil
	} else if req.ReasoningEffort != "" {
		// A model not known to reason (a gateway's name) gets the effort
		// as asked; the caller drops it for one known not to reason.
		out.Reasoning = mustJSON(map[string]string{"effort": req.ReasoningEffort})
	}
	for _, t := range req.Tools {
		params, err := toolSchema(t)
		if err != nil {
			return nil, err
		}
		out.Tools = append(out.Tools, respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params})
	}
	if len(out.Tools) > 0 {
		out.ToolChoice = string(req.ToolChoice)
		parallel := true
		out.ParallelToolCalls = &parallel
	}
	out.Input = responsesInput(rest)
	return json.Marshal(out)
}

// responsesInput maps the conversation to input items: user text, a later
// system message as a developer message, an assistant turn as its kept
// output items (reasoning with encrypted_content first) or rebuilt, and
// each tool result as a function_call_output.
func responsesInput(msgs []Message) []json.RawMessage {
	var out []json.RawMessage
	for _, m := range msgs {
		switch m.Role {
		case RoleAssistant:
			out = append(out, responsesAssistant(m)...)
		case RoleTool:
			out = append(out, mustJSON(respOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: m.Content}))
		case RoleSystem:
			out = append(out, mustJSON(respMessage{Role: "developer", Content: m.Content}))
		default:
			out = append(out, mustJSON(respMessage{Role: "user", Content: m.Content}))
		}
	}
	return out
}

func responsesAssistant(m Message) []json.RawMessage {
	kept := keptBlocks(m.ReasoningDetails, "responses")
	if len(kept) > 0 && blocksMatch(kept, m) {
		return kept
	}
	var out []json.RawMessage
	for _, it := range kept {
		if blockType(it) == "reasoning" {
			out = append(out, it)
		}
	}
	if m.Content != "" {
		out = append(out, mustJSON(respMessage{Role: "assistant", Content: m.Content}))
	}
	for _, tc := range m.ToolCalls {
		args := string(tc.Arguments)
		if tc.ArgumentsInvalid || args == "" {
			args = tc.ArgumentsRaw
		}
		out = append(out, mustJSON(respCall{Type: "function_call", CallID: tc.ID, Name: toolNameSent(tc), Arguments: args}))
	}
	return out
}
