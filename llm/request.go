package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// wireMessage is a Chat Completions message as sent, with the members
// go-openai's ChatCompletionMessage cannot carry (reasoning_details, and
// extra_content on tool calls).
type wireMessage struct {
	Role             Role            `json:"role"`
	Content          wireContent     `json:"content,omitzero"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"`
	ToolCalls        []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Function     wireFunction    `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content,omitempty"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string           `json:"type"`
	Function wireToolFunction `json:"function"`
}

type wireToolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema is sent for a tool without a parameter schema.
const emptySchema = `{"type":"object","properties":{}}`

// buildRequest splits a Request in two: the go-openai request (model,
// stream, stream_options.include_usage), and the body members the transport
// adds (messages, tools, tool_choice, sampling, max tokens, reasoning
// effort, store). go-openai's types cannot express provider extras on tool
// calls or a temperature of 0 (omitempty), and its reasoning-model
// validator rejects requests the endpoint may well accept; the endpoint is
// the judge. The profile adapts the body to the provider (transform.go).
//
// Reasoning goes back as OpenRouter's reasoning_details whenever a message
// has some, and as reasoning_content only when sendReasoning is set: the
// first deepseek-reasoner rejected it in input, newer DeepSeek thinking
// models require it on earlier assistant turns.
func buildRequest(req Request, sendReasoning bool, prof Profile) (openai.ChatCompletionRequest, map[string]json.RawMessage, error) {
	if req.Model == "" {
		return openai.ChatCompletionRequest{}, nil, fmt.Errorf("%w: no model", ErrBadRequest)
	}
	oreq := openai.ChatCompletionRequest{
		Model:         req.Model,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	patch := map[string]json.RawMessage{}
	set := func(k string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrBadRequest, k, err)
		}
		patch[k] = b
		return nil
	}
	var errs []error
	errs = append(errs, set("messages", transformMessages(prof, wireMessages(req.Messages, sendReasoning))))
	if len(req.Tools) > 0 {
		tools, err := wireTools(req.Tools, prof.Schema)
		errs = append(errs, err, set("tools", tools))
		if req.ToolChoice != "" {
			errs = append(errs, set("tool_choice", string(req.ToolChoice)))
		}
	}
	temp, topP := sampling(prof, req.Temperature, req.TopP)
	if temp != nil {
		errs = append(errs, set("temperature", *temp))
	}
	if topP != nil {
		errs = append(errs, set("top_p", *topP))
	}
	if req.MaxOutputTokens > 0 {
		errs = append(errs, set(maxTokensField(req.Model), req.MaxOutputTokens))
	}
	if k, v := reasoningMember(prof, req.ReasoningEffort); k != "" {
		errs = append(errs, set(k, v))
	}
	if prof.StoreFalse {
		errs = append(errs, set("store", false))
	}
	for _, err := range errs {
		if err != nil {
			return oreq, nil, err
		}
	}
	return oreq, patch, nil
}

// maxTokensField is max_completion_tokens for OpenAI's reasoning models
// (which reject max_tokens) and max_tokens, which every compatible server
// accepts, for the rest.
func maxTokensField(model string) string {
	m := model[strings.LastIndex(model, "/")+1:]
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(m, p) {
			return "max_completion_tokens"
		}
	}
	return "max_tokens"
}

func wireMessages(msgs []Message, sendReasoning bool) []wireMessage {
	out := make([]wireMessage, 0, len(msgs))
	for _, m := range msgs {
		w := wireMessage{Role: m.Role, Content: wireContent{Text: m.Content}, ToolCallID: m.ToolCallID}
		if m.Role == RoleAssistant {
			w.ReasoningDetails = m.ReasoningDetails
			if sendReasoning {
				w.ReasoningContent = m.Reasoning
			}
			for _, tc := range m.ToolCalls {
				w.ToolCalls = append(w.ToolCalls, wireCall(tc))
			}
		}
		out = append(out, w)
	}
	return out
}

// wireCall sends a call back as it was made: its arguments (or the raw text
// of invalid ones) and its provider extras (Gemini's thought signature).
func wireCall(tc ToolCall) wireToolCall {
	args := string(tc.Arguments)
	if tc.ArgumentsInvalid || args == "" {
		args = tc.ArgumentsRaw
	}
	if args == "" {
		args = "{}"
	}
	return wireToolCall{
		ID:           tc.ID,
		Type:         "function",
		Function:     wireFunction{Name: tc.Name, Arguments: args},
		ExtraContent: tc.ProviderMetadata,
	}
}

func wireTools(tools []ToolDef, dialect SchemaDialect) ([]wireTool, error) {
	out := make([]wireTool, 0, len(tools))
	for _, t := range tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(emptySchema)
		} else if !json.Valid(params) {
			return nil, fmt.Errorf("%w: tool %q: parameters are not valid JSON", ErrBadRequest, t.Name)
		}
		params, err := SanitizeSchema(dialect, params)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		out = append(out, wireTool{
			Type:     "function",
			Function: wireToolFunction{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return out, nil
}
