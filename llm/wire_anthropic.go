package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/seed43ef5acb/runner/secret"
)

// AnthropicVersion is the anthropic-version header the anthropic wire sends.
const AnthropicVersion = "2023-06-01"

// DefaultAnthropicURL is the anthropic wire's base URL when none is given.
const DefaultAnthropicURL = "https://api.anthropic.com/v1"

// defaultAnthropicMaxTokens is max_tokens when the request leaves it 0: the
// Messages API requires the member.
const defaultAnthropicMaxTokens = 16384

// anthropicWire is Anthropic's Messages API (POST /v1/messages, streamed).
// Docs: platform.claude.com/docs/en/api/messages and
// .../build-with-claude/streaming, .../prompt-caching.
type anthropicWire struct{}

// NewAnthropic returns a provider for the Messages API at cfg.BaseURL
// (DefaultAnthropicURL when empty; /v1 is added when missing), authenticated with
// x-api-key; with cfg.Cloud, Claude on Bedrock or Vertex (newCloud).
// Profile, Azure and SendReasoningContent are ignored.
func NewAnthropic(cfg Config) (*NativeProvider, error) {
	if cfg.Cloud != nil && cfg.Cloud.Platform != PlatformAnthropic {
		return newCloud(cfg)
	}
	if b := strings.TrimRight(cfg.BaseURL, "/"); b != "" && !strings.HasSuffix(b, "/v1") {
		cfg.BaseURL = b + "/v1" // ANTHROPIC_BASE_URL names the host, as for Anthropic's SDKs
	}
	p, err := newNative(anthropicWire{}, cfg, DefaultAnthropicURL)
	return p, err
}

func (anthropicWire) path(string) string { return "/messages" }

func (anthropicWire) baseVar() string { return "ANTHROPIC_BASE_URL" }

func (anthropicWire) header(h http.Header, key string) {
	h.Set("x-api-key", key)
	h.Set("anthropic-version", AnthropicVersion)
}

func (anthropicWire) decoder(a *assembler) streamDecoder { return newAnthropicDecoder(a) }

// ephemeral is a cache_control breakpoint (5-minute cache).
var ephemeral = json.RawMessage(`{"type":"ephemeral"}`)

type anthBlock struct {
	Type string `json:"type"`
	// text
	Text *string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   *string `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`

	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type anthMessage struct {
	Role    Role              `json:"role"`
	Content []json.RawMessage `json:"content"`
}

type anthTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// anthRequest is the body; members are in prompt order (tools, system,
// messages) so a step's body starts with the previous step's bytes.
type anthRequest struct {
	// AnthropicVersion is Bedrock's and Vertex's, which name the model
	// in the URL and leave out model (and, on Bedrock, stream).
	AnthropicVersion string          `json:"anthropic_version,omitempty"`
	Model            string          `json:"model,omitempty"`
	MaxTokens        int             `json:"max_tokens"`
	Stream           bool            `json:"stream,omitempty"`
	Thinking         json.RawMessage `json:"thinking,omitempty"`
	Temperature      *float64        `json:"temperature,omitempty"`
	TopP             *float64        `json:"top_p,omitempty"`
	ToolChoice       json.RawMessage `json:"tool_choice,omitempty"`
	Tools            []anthTool      `json:"tools,omitempty"`
	System           []anthBlock     `json:"system,omitempty"`
	Messages         []anthMessage   `json:"messages"`
}

// anthThinking is a thinking block as it goes back.
type anthThinking struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

// thinkingBudget maps a reasoning effort to budget_tokens; 0 leaves
// thinking off.
func thinkingBudget(effort string) int {
	switch effort {
	case "minimal":
		return 1024
	case "low":
		return 2048
	case "medium":
		return 8192
	case "high":
		return 16384
	}
	return 0
}

// body encodes a Messages request. Cache breakpoints (at most 4) go on the
// last tool, the system prompt, the last message the previous request
// ended with and the newest message, so each step reads the one before
// from the cache (anthropicBreakpoints).
func (anthropicWire) body(req Request) ([]byte, error) {
	out, err := anthropicRequest(req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// anthropicRequest builds the Messages body of req.
func anthropicRequest(req Request) (anthRequest, error) {
	if req.Model == "" {
		return anthRequest{}, fmt.Errorf("%w: no model", ErrBadRequest)
	}
	system, rest := leadingSystem(req.Messages)
	out := anthRequest{Model: req.Model, MaxTokens: req.MaxOutputTokens, Stream: true,
		Temperature: req.Temperature, TopP: req.TopP}
	if out.MaxTokens <= 0 {
		out.MaxTokens = defaultAnthropicMaxTokens
	}
	if system != "" {
		out.System = []anthBlock{{Type: "text", Text: &system, CacheControl: ephemeral}}
	}
	for _, t := range req.Tools {
		params, err := toolSchema(t)
		if err != nil {
			return anthRequest{}, err
		}
		out.Tools = append(out.Tools, anthTool{Name: t.Name, Description: t.Description, InputSchema: params})
	}
	if n := len(out.Tools); n > 0 {
		out.Tools[n-1].CacheControl = ephemeral
		out.ToolChoice = anthropicToolChoice(req.ToolChoice)
	}
	forced := req.ToolChoice == ToolChoiceRequired
	if b := thinkingBudget(req.ReasoningEffort); b > 0 && !forced {
		// Thinking is incompatible with a forced tool choice, a
		// temperature and a top_p below 0.95 (extended-thinking docs).
		out.Thinking = json.RawMessage(fmt.Sprintf(`{"type":"enabled","budget_tokens":%d}`, b))
		out.MaxTokens = max(out.MaxTokens, b+4096)
		out.Temperature, out.TopP = nil, nil
	}
	msgs, err := anthropicMessages(rest)
	if err != nil {
		return anthRequest{}, err
	}
	anthropicBreakpoints(msgs)
	out.Messages = msgs
	return out, nil
}

func anthropicToolChoice(c ToolChoice) json.RawMessage {
	switch c {
	case ToolChoiceRequired:
		return json.RawMessage(`{"type":"any"}`)
	case ToolChoiceNone:
		return json.RawMessage(`{"type":"none"}`)
	}
	return json.RawMessage(`{"type":"auto"}`)
}

// toolSchema is a tool's parameter schema, checked.
func toolSchema(t ToolDef) (json.RawMessage, error) {
	if len(t.Parameters) == 0 {
		return json.RawMessage(emptySchema), nil
	}
	if !json.Valid(t.Parameters) {
		return nil, fmt.Errorf("%w: tool %q: parameters are not valid JSON", ErrBadRequest, t.Name)
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, t.Parameters)
	return buf.Bytes(), nil
}

// leadingSystem joins the system messages before the first other message.
func leadingSystem(msgs []Message) (string, []Message) {
	var parts []string
	i := 0
	for ; i < len(msgs) && msgs[i].Role == RoleSystem; i++ {
		if msgs[i].Content != "" {
			parts = append(parts, msgs[i].Content)
		}
	}
	return strings.Join(parts, "\n\n"), msgs[i:]
}

// anthropicMessages maps the conversation: tool results become tool_result
// blocks of one user message right after the assistant turn that called
// them (a user message that follows joins it), a later system message
// becomes user text, and an assistant turn with thinking is sent back as
// the model wrote it (thinking signatures and redacted_thinking verbatim).
func anthropicMessages(msgs []Message) ([]anthMessage, error) {
	var out []anthMessage
	appendUser := func(block json.RawMessage) {
		if n := len(out); n > 0 && out[n-1].Role == RoleUser {
			out[n-1].Content = append(out[n-1].Content, block)
			return
		}
		out = append(out, anthMessage{Role: RoleUser, Content: []json.RawMessage{block}})
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleAssistant:
			blocks, err := anthropicAssistant(m)
			if err != nil {
				return nil, err
			}
			if len(blocks) > 0 {
				out = append(out, anthMessage{Role: RoleAssistant, Content: blocks})
			}
		case RoleTool:
			content := m.Content
			b := anthBlock{Type: "tool_result", ToolUseID: m.ToolCallID}
			if content != "" {
				b.Content = &content
			}
			appendUser(mustJSON(b))
		default:
			text := m.Content
			if m.Role == RoleSystem {
				text = "<system>\n" + text + "\n</system>"
			}
			if strings.TrimSpace(text) == "" {
				continue // Anthropic rejects empty text blocks
			}
			appendUser(mustJSON(anthBlock{Type: "text", Text: &text}))
		}
	}
	return out, nil
}

// anthropicAssistant is an assistant turn's content blocks: the blocks the
// model streamed (kept in ReasoningDetails when they held thinking) when
// they still describe the turn, else text and tool_use rebuilt from it.
func anthropicAssistant(m Message) ([]json.RawMessage, error) {
	kept := signedBlocks(keptBlocks(m.ReasoningDetails, "anthropic"))
	if len(kept) > 0 && blocksMatch(kept, m) {
		return kept, nil
	}
	var blocks []json.RawMessage
	for _, b := range kept {
		if t := blockType(b); t == "thinking" || t == "redacted_thinking" {
			blocks = append(blocks, b)
		}
	}
	if strings.TrimSpace(m.Content) != "" {
		text := m.Content
		blocks = append(blocks, mustJSON(anthBlock{Type: "text", Text: &text}))
	}
	for _, tc := range m.ToolCalls {
		blocks = append(blocks, mustJSON(anthBlock{Type: "tool_use", ID: tc.ID, Name: toolNameSent(tc), Input: callInput(tc)}))
	}
	return blocks, nil
}

// signedBlocks leaves out thinking blocks whose text was redacted (a
// history read back for --continue): the signature no longer matches and
// the API would refuse the request, while it ignores earlier turns'
// thinking anyway (extended-thinking docs, "Preserving thinking blocks").
func signedBlocks(blocks []json.RawMessage) []json.RawMessage {
	out := blocks[:0:0]
	for _, b := range blocks {
		if blockType(b) == "thinking" && bytes.Contains(b, []byte(secret.Mark)) {
			var t anthThinking
			if json.Unmarshal(b, &t) == nil && strings.Contains(t.Thinking, secret.Mark) {
				continue
			}
		}
		out = append(out, b)
	}
	return out
}

// toolNameSent is the name a call was made with.
func toolNameSent(tc ToolCall) string {
	if tc.NameAsSent != "" {
		return tc.NameAsSent
	}
	return tc.Name
}

// callInput is a call's arguments as a JSON object: {} for invalid or
// non-object arguments (the API takes only objects).
func callInput(tc ToolCall) json.RawMessage {
	a := bytes.TrimSpace(tc.Arguments)
	if tc.ArgumentsInvalid || len(a) == 0 || a[0] != '{' {
		return json.RawMessage(`{}`)
	}
	return a
}

// anthropicBreakpoints puts cache_control on the last block of the newest
// message and of the message the previous request ended with (the user
// turn before the newest assistant turn), so the prefix written by the
// previous step is read even when a step adds more than the 20 blocks the
// cache looks back over. With the tools' and the system prompt's that makes
// at most four, the API's limit.
func anthropicBreakpoints(msgs []anthMessage) {
	if len(msgs) == 0 {
		return
	}
	last := len(msgs) - 1
	markLast(&msgs[last])
	for i := last - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			if i > 0 {
				markLast(&msgs[i-1])
			}
			return
		}
	}
}

// markLast sets cache_control on a message's last block, appending the
// member so the block's other bytes stay as the previous request sent them.
func markLast(m *anthMessage) {
	n := len(m.Content)
	if n == 0 {
		return
	}
	b := bytes.TrimSpace(m.Content[n-1])
	if t := blockType(b); t == "thinking" || t == "redacted_thinking" || len(b) < 3 || b[len(b)-1] != '}' {
		return // thinking blocks cannot carry cache_control
	}
	out := make([]byte, 0, len(b)+40)
	out = append(out, b[:len(b)-1]...)
	out = append(out, `,"cache_control":`...)
	out = append(out, ephemeral...)
	m.Content[n-1] = append(out, '}')
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only types of this file, which always encode
	}
	return b
}
