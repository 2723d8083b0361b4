package llm

import "testing"

// BenchmarkDecodeChunk measures the lenient chunk decoder alone on a
// typical text delta.
func BenchmarkDecodeChunk(b *testing.B) {
	raw := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"content":"lorem ipsum "},"logprobs":null,"finish_reason":null}],"usage":null}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeChunk(raw); err != nil {
			b.Fatal(err)
		}
	}
}
