package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// chunk is one streamed Chat Completions chunk, decoded leniently: every
// member is optional, unknown members are ignored, and the vendor members
// go-openai drops (top-level error, x_groq, reasoning, reasoning_details,
// extra_content) are kept.
type chunk struct {
	Model   aliasJSON       `json:"model"` // read once per reply: not copied per chunk
	Choices []choice        `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	XGroq   *xGroq          `json:"x_groq"`
	Error   json.RawMessage `json:"error"`
	// BaseResp is MiniMax's status block: status_code 0 is success, any
	// other code is an error sent with HTTP 200 (MiniMax ChatCompletion v2
	// docs: 1002 rate limit, 1008 insufficient balance, 2013 invalid params).
	BaseResp *struct {
		StatusCode lenientInt    `json:"status_code"`
		StatusMsg  lenientString `json:"status_msg"`
	} `json:"base_resp"`
}

type xGroq struct {
	Usage *wireUsage `json:"usage"`
}

type choice struct {
	Index        *lenientInt `json:"index"`
	Usage        *wireUsage  `json:"usage"` // Moonshot puts the usage in the finishing choice
	Delta        *delta      `json:"delta"`
	Message      *delta      `json:"message"` // a non-streamed completion
	FinishReason finishValue `json:"finish_reason"`
}

type delta struct {
	Content          json.RawMessage `json:"content"` // string, null, or an array of parts
	Refusal          lenientString   `json:"refusal"` // OpenAI: read as text
	ReasoningContent lenientString   `json:"reasoning_content"`
	Reasoning        lenientString   `json:"reasoning"`
	ReasoningText    lenientString   `json:"reasoning_text"` // GitHub Copilot (BerriAI/litellm#35021)
	ReasoningDetails json.RawMessage `json:"reasoning_details"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index        *lenientInt     `json:"index"`
	ID           lenientString   `json:"id"`
	Function     functionDelta   `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content"`
}

type functionDelta struct {
	Name      lenientString   `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // string fragment, or an object (llama.cpp)
}

type wireUsage struct {
	PromptTokens            lenientInt     `json:"prompt_tokens"`
	CompletionTokens        lenientInt     `json:"completion_tokens"`
	InputTokens             lenientInt     `json:"input_tokens"`  // Anthropic-style names (gateways)
	OutputTokens            lenientInt     `json:"output_tokens"` // Anthropic-style names (gateways)
	CachedTokens            lenientInt     `json:"cached_tokens"` // Moonshot: top-level in usage
	PromptTokensDetails     *promptDetails `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens lenientInt `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptCacheHitTokens     lenientInt `json:"prompt_cache_hit_tokens"`     // DeepSeek
	CacheReadInputTokens     lenientInt `json:"cache_read_input_tokens"`     // Anthropic
	CacheCreationInputTokens lenientInt `json:"cache_creation_input_tokens"` // Anthropic
}

type promptDetails struct {
	CachedTokens     lenientInt `json:"cached_tokens"`
	CacheWriteTokens lenientInt `json:"cache_write_tokens"` // OpenRouter
}

// usage converts the wire usage to Usage; nil when it counts nothing (a
// placeholder {"prompt_tokens":0,...} is no measurement: a prompt is never
// empty), so the step's tokens stay unknown rather than 0.
func (w *wireUsage) usage() *Usage {
	if w == nil {
		return nil
	}
	u := &Usage{
		InputTokens:       int64(w.PromptTokens),
		OutputTokens:      int64(w.CompletionTokens),
		CachedInputTokens: int64(w.PromptCacheHitTokens),
		CacheWriteTokens:  int64(w.CacheCreationInputTokens),
	}
	if d := w.PromptTokensDetails; d != nil {
		if d.CachedTokens > 0 {
			u.CachedInputTokens = int64(d.CachedTokens)
		}
		if d.CacheWriteTokens > 0 {
			u.CacheWriteTokens = int64(d.CacheWriteTokens)
		}
	}
	if u.CachedInputTokens == 0 && w.CacheReadInputTokens > 0 {
		u.CachedInputTokens = int64(w.CacheReadInputTokens)
	}
	if u.CachedInputTokens == 0 && w.CachedTokens > 0 {
		u.CachedInputTokens = int64(w.CachedTokens)
	}
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		u.InputTokens, u.OutputTokens = int64(w.InputTokens), int64(w.OutputTokens)
	}
	if d := w.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = int64(d.ReasoningTokens)
	}
	if *u == (Usage{}) {
		return nil
	}
	return u
}

// decodeChunk decodes one data payload. Only a JSON syntax error fails;
// oddly typed members are read as absent (lenientUnmarshal), so a
// "usage":"n/a" or a "tool_calls":{} does not cost the chunk its text.
func decodeChunk(raw []byte) (chunk, error) {
	var c chunk
	err := lenientUnmarshal(raw, &c)
	if err == nil && c.XGroq == nil && bytes.Contains(raw, []byte(`"x_`)) {
		c.XGroq = vendorUsage(raw)
	}
	return c, err
}

// lenientUnmarshal is json.Unmarshal that reads oddly typed members as
// absent: Unmarshal decodes the rest and reports the first type mismatch,
// which is dropped. Only a syntax error fails.
func lenientUnmarshal(raw []byte, v any) error {
	err := json.Unmarshal(raw, v)
	if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
		return nil
	}
	return err
}

// vendorUsage finds a usage inside a top-level vendor block named x_*
// (Groq's x_groq, and the same shape under other vendors' prefixes).
func vendorUsage(raw []byte) *xGroq {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	for k, v := range top {
		if len(k) < 3 || k[:2] != "x_" {
			continue
		}
		var x xGroq
		if json.Unmarshal(v, &x) == nil && x.Usage != nil {
			return &x
		}
	}
	return nil
}

// contentParts splits a delta's content into text and reasoning. Content is
// a string, null, or an array of parts ({"type":"text","text":...} and
// Mistral's {"type":"thinking","thinking":[parts]}).
func contentParts(raw json.RawMessage) (text, reasoning string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == 'n' {
		return "", ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, ""
		}
		return "", ""
	}
	if raw[0] != '[' {
		return "", ""
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     lenientString   `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", ""
	}
	for _, p := range parts {
		switch p.Type {
		case "text", "":
			text += string(p.Text)
		case "thinking", "reasoning":
			t, r := contentParts(p.Thinking)
			reasoning += t + r
		}
	}
	return text, reasoning
}

// lenientString reads a JSON string; a number keeps its text; null, bools,
// objects and arrays read as "".
type lenientString string

// aliasJSON holds a member's JSON text without copying it: it aliases the
// payload, so it is valid only while that payload is handled.
type aliasJSON []byte

// UnmarshalJSON implements json.Unmarshaler.
func (a *aliasJSON) UnmarshalJSON(b []byte) error {
	*a = b
	return nil
}

// String decodes the text as a JSON string; "" when it is not one.
func (a aliasJSON) String() string {
	var s string
	if len(a) == 0 || a[0] != '"' || json.Unmarshal(a, &s) != nil {
		return ""
	}
	return s
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *lenientString) UnmarshalJSON(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		if inner := b[1 : len(b)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			*s = lenientString(inner) // no escapes: the bytes are the value
			return nil
		}
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = lenientString(v)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		*s = lenientString(b)
	}
	return nil
}

// lenientInt reads a JSON number or a numeric string; anything else reads
// as 0.
type lenientInt int64

// UnmarshalJSON implements json.Unmarshaler.
func (n *lenientInt) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = lenientInt(v)
	} else if f, err := strconv.ParseFloat(s, 64); err == nil {
		*n = lenientInt(f)
	}
	return nil
}
