package llm_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

// TestToolCallJSONKeepsArgumentBytes: a call survives a JSON round trip
// with its arguments byte for byte, however the model spelled them; compact
// arguments need no second copy.
func TestToolCallJSONKeepsArgumentBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, args string
		copied     bool // arguments_text written
	}{
		{"compact", `{"path":"a"}`, false},
		{"spaces", `{"path": "a"}`, true},
		{"newlines and indent", "{\n  \"path\": \"a\"\n}", true},
		{"html characters", `{"q":"a<b&c"}`, true},
		{"escaped slash and unicode", `{"p":"a\/b \u00e9"}`, false}, // compaction keeps escapes
		{"array", `[1, 2]`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := llm.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(tc.args)}
			b, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(b), `"arguments_text"`); got != tc.copied {
				t.Errorf("arguments_text written = %v, want %v: %s", got, tc.copied, b)
			}
			var out llm.ToolCall
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Arguments, in.Arguments) || out.ID != in.ID || out.Name != in.Name {
				t.Errorf("round trip: got %+v (arguments %s), want %s", out, out.Arguments, tc.args)
			}
		})
	}
	t.Run("invalid arguments keep their raw text", func(t *testing.T) {
		t.Parallel()
		in := llm.ToolCall{ID: "c1", Name: "read", ArgumentsRaw: `{"pa`, ArgumentsInvalid: true}
		b, _ := json.Marshal(in)
		var out llm.ToolCall
		if err := json.Unmarshal(b, &out); err != nil || out.ArgumentsRaw != in.ArgumentsRaw || !out.ArgumentsInvalid || out.Arguments != nil {
			t.Errorf("got %+v (%v) from %s", out, err, b)
		}
	})
}
