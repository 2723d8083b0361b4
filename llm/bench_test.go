package llm_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// memTransport answers every request with the same SSE body from memory,
// so the benchmarks measure decoding, not the network.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(bytes.NewReader(m.body)),
		Request: r,
	}, nil
}

// benchBody is a ~10 MB stream: reasoning, text in word-sized deltas, and
// tool calls in fragments, with keep-alive comments sprinkled in.
func benchBody(b *testing.B) []byte {
	b.Helper()
	words := strings.Repeat("lorem ipsum dolor sit amet consectetur ", 6_500)
	calls := make([]llmtest.ToolCall, 200)
	for i := range calls {
		calls[i] = llmtest.Call("read", `{"path":"`+strings.Repeat("dir/", 50)+`file.go","limit":400}`)
	}
	body := llmtest.Turn{Reasoning: words[:len(words)/4], Text: words, ToolCalls: calls}.SSE()
	body = bytes.Replace(body, []byte("\n\ndata: {"), []byte("\n\n: keep-alive\n\ndata: {"), 1000)
	if len(body) < 9<<20 {
		b.Fatalf("bench body is only %d bytes", len(body))
	}
	return body
}

// BenchmarkStream decodes the body through the whole provider: transport
// adaptor, go-openai RecvRaw, lenient decoding and event assembly.
func BenchmarkStream(b *testing.B) {
	body := benchBody(b)
	p, err := llm.New(llm.Config{BaseURL: "http://bench.invalid/v1", HTTPClient: &http.Client{Transport: memTransport{body}}})
	if err != nil {
		b.Fatal(err)
	}
	req := llm.Request{Model: "m", Tools: []llm.ToolDef{{Name: "read"}}}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var last llm.Event
		for ev := range p.Stream(b.Context(), req) {
			last = ev
		}
		if last.Type != llm.EventFinishStep {
			b.Fatalf("stream ended with %s: %v", last.Type, last.Err)
		}
	}
}

// BenchmarkGoOpenAIRecv reads the same body with plain go-openai Recv, for
// comparison (it decodes less: no reasoning, no assembly).
func BenchmarkGoOpenAIRecv(b *testing.B) {
	body := benchBody(b)
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = "http://bench.invalid/v1"
	cfg.HTTPClient = &http.Client{Transport: memTransport{body}}
	client := openai.NewClientWithConfig(cfg)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		stream, err := client.CreateChatCompletionStream(b.Context(), openai.ChatCompletionRequest{Model: "m"})
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		_ = stream.Close()
	}
}
