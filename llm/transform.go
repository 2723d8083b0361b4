package llm

import (
	"crypto/sha256"
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
)

// wireContent is a message's content as sent: a string, no member at all
// (Omit), or one text part carrying a cache_control breakpoint (Cache).
type wireContent struct {
	Text  string
	Omit  bool
	Cache bool
}

// IsZero makes an omitted content leave the message (json omitzero).
func (c wireContent) IsZero() bool { return c.Omit }

// MarshalJSON implements json.Marshaler.
func (c wireContent) MarshalJSON() ([]byte, error) {
	if c.Cache {
		return json.Marshal([]map[string]any{{
			"type": "text", "text": c.Text, "cache_control": map[string]string{"type": "ephemeral"},
		}})
	}
	return json.Marshal(c.Text)
}

// transformMessages applies the profile's message traits in order: tool
// call ids, message order, empty content, then cache breakpoints (last, so
// they land on the messages actually sent).
func transformMessages(p Profile, msgs []wireMessage) []wireMessage {
	if p.ToolCallIDs != "" {
		msgs = rewriteToolCallIDs(msgs, p.ToolCallIDs)
	}
	if p.NoUserAfterTool {
		msgs = separateToolFromUser(msgs)
	}
	if p.NoEmptyContent {
		msgs = dropEmptyContent(msgs)
	}
	if p.CacheControl {
		markCacheBreakpoints(msgs)
	}
	return msgs
}

// rewriteToolCallIDs maps every tool-call id to the format, the same way in
// the assistant's calls and in the tool results that answer them. An id
// already in the format is kept; two ids never map to one.
func rewriteToolCallIDs(msgs []wireMessage, f IDFormat) []wireMessage {
	ids := map[string]string{}
	taken := map[string]bool{}
	mapID := func(id string) string {
		if v, ok := ids[id]; ok {
			return v
		}
		v := formatID(id, f, 0)
		for n := 1; taken[v]; n++ {
			v = formatID(id, f, n)
		}
		ids[id], taken[v] = v, true
		return v
	}
	out := make([]wireMessage, len(msgs))
	for i, m := range msgs {
		if len(m.ToolCalls) > 0 {
			calls := make([]wireToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				c.ID = mapID(c.ID)
				calls[j] = c
			}
			m.ToolCalls = calls
		}
		if m.ToolCallID != "" {
			m.ToolCallID = mapID(m.ToolCallID)
		}
		out[i] = m
	}
	return out
}

var (
	mistralID   = regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)
	anthropicID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	notIDChar   = regexp.MustCompile(`[^a-zA-Z0-9_-]`)
)

// formatID returns id in format f; salt > 0 picks another value after a
// collision. Mistral ids are 9 base-62 digits of the id's SHA-256
// (OpenCode keeps the first 9 alphanumerics, which collide for call_1234567890
// and call_1234567891); Anthropic ids replace other characters with "_".
func formatID(id string, f IDFormat, salt int) string {
	switch f {
	case IDsMistral:
		if salt == 0 && mistralID.MatchString(id) {
			return id
		}
		return hashID(id, salt, 9)
	case IDsAnthropic:
		if salt == 0 && anthropicID.MatchString(id) {
			return id
		}
		v := notIDChar.ReplaceAllString(id, "_")
		if v == "" || salt > 0 {
			v += "_" + hashID(id, salt, 6)
		}
		return v
	}
	return id
}

func hashID(id string, salt, n int) string {
	sum := sha256.Sum256([]byte(id + strings.Repeat("#", salt)))
	s := new(big.Int).SetBytes(sum[:]).Text(62)
	return s[:n]
}

// separateToolFromUser inserts an assistant message between a tool result
// and a user message that follows it (OpenCode inserts "Done." for
// Mistral, which answers "Unexpected role 'user' after role 'tool'").
func separateToolFromUser(msgs []wireMessage) []wireMessage {
	out := make([]wireMessage, 0, len(msgs)+1)
	for i, m := range msgs {
		out = append(out, m)
		if m.Role == RoleTool && i+1 < len(msgs) && msgs[i+1].Role == RoleUser {
			out = append(out, wireMessage{Role: RoleAssistant, Content: wireContent{Text: "Done."}})
		}
	}
	return out
}

// noOutput stands in for an empty tool result.
const noOutput = "(no output)"

// dropEmptyContent removes what Anthropic rejects as empty text: a
// message whose content is empty or blank is dropped, unless it is an
// assistant message with tool calls (its content is left out) or a tool
// result (which must stay to answer its call, so it gets a placeholder).
func dropEmptyContent(msgs []wireMessage) []wireMessage {
	out := make([]wireMessage, 0, len(msgs))
	for _, m := range msgs {
		if strings.TrimSpace(m.Content.Text) != "" {
			out = append(out, m)
			continue
		}
		switch {
		case len(m.ToolCalls) > 0:
			m.Content = wireContent{Omit: true}
		case m.Role == RoleTool:
			m.Content = wireContent{Text: noOutput}
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// markCacheBreakpoints puts cache_control on the first system message and
// on the last two messages that have content (OpenCode's applyCaching):
// the stable prefix and the newest turn are read from the cache.
func markCacheBreakpoints(msgs []wireMessage) {
	for i := range msgs {
		if msgs[i].Role == RoleSystem && !msgs[i].Content.Omit {
			msgs[i].Content.Cache = true
			break
		}
	}
	marked := 0
	for i := len(msgs) - 1; i >= 0 && marked < 2; i-- {
		if msgs[i].Content.Omit || msgs[i].Content.Text == "" {
			continue
		}
		msgs[i].Content.Cache = true
		marked++
	}
}

// sampling returns the temperature and top_p to send under the profile.
func sampling(p Profile, temp, topP *float64) (*float64, *float64) {
	if p.NoSampling {
		return nil, nil
	}
	if p.Temperature != nil && (temp == nil || p.FixedTemperature) {
		temp = p.Temperature
	}
	if p.TopP != nil && topP == nil {
		topP = p.TopP
	}
	return temp, topP
}

// reasoningMember returns the body member and value that carry a
// requested reasoning effort under the profile; "" when none is sent.
func reasoningMember(p Profile, effort string) (string, any) {
	if v, ok := p.ReasoningEffort[effort]; ok {
		effort = v
	}
	switch {
	case effort == "":
		return "", nil
	case p.ReasoningObject:
		return "reasoning", map[string]string{"effort": effort}
	default:
		return "reasoning_effort", effort
	}
}
