package llm

import (
	"bytes"
	"encoding/json"
)

// toolCallFields is ToolCall without its JSON methods.
type toolCallFields ToolCall

// toolCallJSON is ToolCall's JSON form. ArgumentsText carries the
// arguments' exact bytes when encoding/json would change them.
type toolCallJSON struct {
	toolCallFields
	ArgumentsText string `json:"arguments_text,omitempty"`
}

// MarshalJSON writes the call with its arguments as a JSON value, and,
// when encoding/json would compact or escape them ({"path": "a"} becomes
// {"path":"a"}), also their exact text as arguments_text. A call sent back
// to the provider after a round trip (history.jsonl, --continue) then
// keeps the bytes the model sent, so the provider's prompt cache hits.
func (tc ToolCall) MarshalJSON() ([]byte, error) {
	j := toolCallJSON{toolCallFields: toolCallFields(tc)}
	if len(tc.Arguments) > 0 {
		canon, err := json.Marshal(tc.Arguments)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(canon, tc.Arguments) {
			j.ArgumentsText = string(tc.Arguments)
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes: arguments_text, when
// present and valid JSON, restores the arguments' exact bytes; a null
// arguments value reads as nil.
func (tc *ToolCall) UnmarshalJSON(b []byte) error {
	var j toolCallJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	switch {
	case j.ArgumentsText != "" && json.Valid([]byte(j.ArgumentsText)):
		j.Arguments = json.RawMessage(j.ArgumentsText)
	case string(j.Arguments) == "null":
		j.Arguments = nil // as written for invalid arguments
	}
	*tc = ToolCall(j.toolCallFields)
	return nil
}
