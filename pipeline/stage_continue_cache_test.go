package pipeline

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// commonPrefix is the length in bytes of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// messagesEnd is the offset in raw (a request body) just past its last
// message: the end of the prefix a provider's prompt cache can hold.
func messagesEnd(t *testing.T, raw []byte) int {
	t.Helper()
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || len(body.Messages) == 0 {
		t.Fatalf("request body without messages (%v): %s", err, raw)
	}
	last := body.Messages[len(body.Messages)-1]
	i := bytes.LastIndex(raw, last)
	if i < 0 {
		t.Fatalf("last message not found in the body as sent")
	}
	return i + len(last)
}

// TestContinuePromptCachePrefix measures prompt-cache friendliness on the
// bytes the fake provider received: the continued run's first request
// body starts with the previous run's last request body byte for byte, up
// to and including that request's last message (everything the provider
// cached), and only then differs (the new user message). Tool-call
// arguments go back as the model sent them, in every spelling (spaces,
// newlines, key order, escapes, characters JSON encoders escape). The
// shared prefix's length is logged (go test -v -run TestContinuePromptCachePrefix).
func TestContinuePromptCachePrefix(t *testing.T) {
	for _, tc := range []struct{ name, args string }{
		{"compact", `{"content":"hello\n","path":"hello.txt"}`},
		{"spaces after separators", `{"path": "hello.txt", "content": "hello\n"}`},
		{"indented over lines", "{\n  \"path\": \"hello.txt\",\n  \"content\": \"hello\\n\"\n}"},
		{"escapes and html characters", `{"path":"hello.txt","content":"a<b & c>d \u00e9\/\n"}`},
		{"trailing space inside", `{"path":"hello.txt" , "content":"hello\n" }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkCachePrefix(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("write", tc.args)}}.Reply())
		})
	}
}

// checkCachePrefix runs a task whose first turn is first, continues it,
// and compares the requests as the fake provider received them.
func checkCachePrefix(t *testing.T, first llmtest.Reply) {
	t.Helper()
	spec, repo := execFixture(t)
	r1, r2 := filepath.Join(t.TempDir(), "r1"), filepath.Join(t.TempDir(), "r2")
	s1 := newModel(t, first, llmtest.Turn{Text: "Wrote hello.txt."}.Reply())
	s2 := newModel(t, writeFileTurn("bye.txt", "bye\n"), llmtest.Turn{Text: "Wrote bye.txt."}.Reply())
	for i, run := range []struct {
		out, from, prompt string
		srv               *llmtest.Server
	}{{r1, "", "", s1}, {r2, r1, "Also write bye.txt.", s2}} {
		res, err := continueRun(t, spec, repo, run.out, run.from, run.prompt, false, run.srv)
		if err != nil || res.Status != event.StatusSuccess {
			t.Fatalf("run %d: %v %+v", i+1, err, res)
		}
	}
	prev := s1.Requests()
	last, firstReq := prev[len(prev)-1].Raw, s2.Requests()[0].Raw
	shared, cached := commonPrefix(last, firstReq), messagesEnd(t, last)
	if shared < cached {
		t.Fatalf("the continued run's first request shares %d bytes with the last request of the run it continues; its messages end at byte %d:\nlast:  %.300s\nfirst: %.300s",
			shared, cached, last[max(0, shared-100):], firstReq[max(0, shared-100):])
	}
	if shared == len(last) || shared == len(firstReq) {
		t.Fatalf("the requests are equal up to %d bytes: the new prompt is missing", shared)
	}
	t.Logf("shared prefix: %d bytes of %d (last request of run 1) and %d (first request of run 2); run 1's messages end at byte %d",
		shared, len(last), len(firstReq), cached)
}
