package llm

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestEncodeObjectMatchesMarshal checks that the request body patchBody
// writes is byte for byte what json.Marshal of the same members wrote
// before (sorted keys, HTML-escaped strings, a nil member as null), for
// members made the way buildRequest makes them.
func TestEncodeObjectMatchesMarshal(t *testing.T) {
	raw := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw(map[string]any{"model": "gpt-4.1-mini", "stream": true, "stream_options": map[string]bool{"include_usage": true}}), &body); err != nil {
		t.Fatal(err)
	}
	body["messages"] = raw([]map[string]any{
		{"role": "user", "content": "a <b> & \"c\" \u2028 ünïcødé \\ \t\n"},
		{"role": "assistant", "tool_calls": []map[string]any{{"id": "call_1", "function": map[string]string{"name": "bash", "arguments": `{"command":"echo 1 >> notes.txt"}`}}}},
	})
	body["tools"] = raw([]map[string]any{{"type": "function", "function": map[string]any{"name": "bash", "parameters": json.RawMessage(`{ "type" : "object" }`)}}})
	body["temperature"] = raw(0.2)
	body["empty"] = nil
	body["quote\"key<"] = raw(nil)
	want, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := encodeObject(body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encodeObject:\n%s\njson.Marshal:\n%s", got, want)
	}
}

// BenchmarkPatchBody compares the body patch with json.Marshal on a
// 40-message conversation.
func BenchmarkPatchBody(b *testing.B) {
	var msgs []map[string]string
	for i := range 40 {
		msgs = append(msgs, map[string]string{"role": "tool", "content": string(bytes.Repeat([]byte("output line <x> & y\n"), 20+i))})
	}
	m, _ := json.Marshal(msgs)
	body := map[string]json.RawMessage{"model": json.RawMessage(`"gpt-4.1-mini"`), "stream": json.RawMessage(`true`), "messages": m}
	b.Run("encodeObject", func(b *testing.B) {
		for b.Loop() {
			_, _ = encodeObject(body)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(body)
		}
	})
}
