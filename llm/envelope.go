package llm

import (
	"encoding/json"
	"strings"
)

// The native wires keep what the model streamed beyond text and tool calls
// (thinking blocks with their signatures, reasoning items with their
// encrypted content) in the finish-step's ReasoningDetails, as
// {"<wire>": [block or item, …]}: every block of the turn, verbatim, in the
// order the model produced them. The runner keeps it with the assistant
// message and the wire sends it back on later requests.

// keepBlocks wraps a turn's blocks for ReasoningDetails; nil when empty.
func keepBlocks(wire string, blocks []json.RawMessage) json.RawMessage {
	if len(blocks) == 0 {
		return nil
	}
	b, err := json.Marshal(map[string][]json.RawMessage{wire: blocks})
	if err != nil {
		return nil
	}
	return b
}

// keptBlocks reads the blocks of wire kept in ReasoningDetails; nil when
// there are none (or they came from another wire).
func keptBlocks(details json.RawMessage, wire string) []json.RawMessage {
	if len(details) == 0 || details[0] != '{' {
		return nil
	}
	var env map[string][]json.RawMessage
	if json.Unmarshal(details, &env) != nil {
		return nil
	}
	return env[wire]
}

// blockType is the "type" member of a block or item.
func blockType(b json.RawMessage) string {
	var v struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(b, &v)
	return v.Type
}

// blocksMatch reports whether kept blocks still describe message m: the
// same text and the same tool calls (ids and names) in order. A history
// edited since (a compaction, a call answered differently) is rebuilt.
func blocksMatch(kept []json.RawMessage, m Message) bool {
	var text strings.Builder
	var ids []string
	for _, b := range kept {
		var v struct {
			Type   string `json:"type"`
			Text   string `json:"text"`
			ID     string `json:"id"`
			CallID string `json:"call_id"`
			Role   string `json:"role"`
			// Responses message items.
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(b, &v) != nil {
			return false
		}
		switch v.Type {
		case "text":
			text.WriteString(v.Text)
		case "tool_use":
			ids = append(ids, v.ID)
		case "function_call":
			ids = append(ids, v.CallID)
		case "message":
			for _, c := range v.Content {
				if c.Type == "output_text" || c.Type == "refusal" {
					text.WriteString(c.Text)
				}
			}
		}
	}
	if text.String() != m.Content || len(ids) != len(m.ToolCalls) {
		return false
	}
	for i, tc := range m.ToolCalls {
		if ids[i] != tc.ID {
			return false
		}
	}
	return true
}
