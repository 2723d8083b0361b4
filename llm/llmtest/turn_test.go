package llmtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/golden"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// TestTurnSSEGolden pins the shape of the builders' bodies: the pipeline
// scripts cassettes with them, so a change must be deliberate (-update).
func TestTurnSSEGolden(t *testing.T) {
	t.Parallel()
	tests := map[string]llmtest.Turn{
		"text":  {Text: "Hello there, world."},
		"tools": {Reasoning: "Look first.", ToolCalls: []llmtest.ToolCall{llmtest.Call("read", `{"path":"a.go"}`), {ID: "g", Name: "list", Arguments: `{}`, ExtraContent: json.RawMessage(`{"google":{"thought_signature":"c2ln"}}`)}}},
		"usage": {Text: "ok", Usage: &llmtest.Usage{PromptTokens: 9, CompletionTokens: 1, CachedTokens: 4}, FinishReason: "length"},
	}
	for name, turn := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := turn.SSE()
			golden.Check(t, filepath.Join("testdata", name+".sse"), got)
		})
	}
}

func TestServerScriptAndRecord(t *testing.T) {
	t.Parallel()
	slow := llmtest.Text("slow")
	slow.Delay = 20 * time.Millisecond
	srv := llmtest.NewServer(t,
		llmtest.HTTPError(http.StatusTooManyRequests, `{"error":{"message":"slow down"}}`, "Retry-After", "1"),
		slow,
	)
	if !strings.HasSuffix(srv.URL(), "/v1") {
		t.Fatalf("URL %q does not end in /v1", srv.URL())
	}
	post := func(body string) (*http.Response, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := post(`{"model":"a","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(body, "slow down") {
		t.Errorf("first reply: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp, body = post(`{"model":"b"}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("second reply: %d %s", resp.StatusCode, body)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Body["model"] != "a" || reqs[1].Body["model"] != "b" ||
		reqs[0].Path != "/v1/chat/completions" || len(reqs[0].Messages()) != 1 {
		t.Errorf("recorded %+v", reqs)
	}
}
