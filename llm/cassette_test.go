package llm_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// session is a scripted multi-step conversation: each step's request is the
// history so far; the model replies in turn.
func session(t *testing.T, p *llm.Provider) [][]llm.Event {
	t.Helper()
	tools := []llm.ToolDef{{Name: "read", Parameters: []byte(`{"type":"object"}`)}}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "sys"}, {Role: llm.RoleUser, Content: "go"}}
	var all [][]llm.Event
	for range 4 {
		events := collect(t, p, llm.Request{Model: "gpt-4.1-mini", Messages: msgs, Tools: tools})
		all = append(all, events)
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: "step"})
		for _, ev := range events {
			if ev.Type == llm.EventToolCall {
				msgs[len(msgs)-1].ToolCalls = append(msgs[len(msgs)-1].ToolCalls, *ev.ToolCall)
				msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: ev.ToolCall.ID, Content: "ok"})
			}
		}
	}
	return all
}

func sessionServer(t *testing.T) *llmtest.Server {
	t.Helper()
	return llmtest.NewServer(t,
		llmtest.Turn{Reasoning: "Read first.", ToolCalls: []llmtest.ToolCall{llmtest.Call("read", `{"path":"a.go"}`)}}.Reply(),
		llmtest.HTTPError(http.StatusTooManyRequests, `{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}`, "retry-after", "2"),
		llmtest.ToolCalls(llmtest.Call("read", `{"path":"b.go"}`), llmtest.Call("Read", `{"path":"c.go"}`)),
		llmtest.Text("All done here."),
	)
}

func TestCassetteRecordReplay(t *testing.T) {
	t.Parallel()
	srv := sessionServer(t)
	var tape bytes.Buffer
	rec, err := llm.New(llm.Config{
		BaseURL: srv.URL(), APIKey: "sk-secret-123",
		Headers:    map[string]string{"X-Api-Key": "also-secret", "HTTP-Referer": "https://example.test"},
		HTTPClient: &http.Client{Transport: llm.NewRecorder(&tape, srv.Client().Transport)},
	})
	if err != nil {
		t.Fatal(err)
	}
	recorded := session(t, rec)
	got := []string{}
	for _, events := range recorded {
		s := summarize(events)
		got = append(got, s["finish_reason"].(string)+" "+s["text"].(string))
	}
	want := []string{"tool-calls ", "error ", "tool-calls ", "stop All done here."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("recorded session (-want +got):\n%s", diff)
	}
	if e := lastError(t, recorded[1]); e.RetryAfter.Seconds() != 2 {
		t.Errorf("retry after %v, want 2s", e.RetryAfter)
	}
	if reqs := srv.Requests(); len(reqs) != 4 || len(reqs[3].Messages()) != 8 {
		t.Errorf("server saw %d requests", len(reqs))
	}

	if strings.Contains(tape.String(), "secret") {
		t.Errorf("cassette leaks a secret:\n%s", tape.String())
	}
	if !strings.Contains(tape.String(), `"Authorization":"REDACTED"`) {
		t.Errorf("Authorization not redacted:\n%s", tape.String())
	}
	cas, err := llm.LoadCassette(bytes.NewReader(tape.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(cas.Exchanges) != 4 {
		t.Fatalf("cassette holds %d exchanges, want 4", len(cas.Exchanges))
	}
	cas.Source = "testdata/session.jsonl"
	rt := cas.RoundTripper()
	play, err := llm.New(llm.Config{BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	replayed := session(t, play)
	if diff := eventsDiff(recorded, replayed); diff != "" {
		t.Errorf("replay differs (-recorded +replayed):\n%s", diff)
	}
	for _, events := range recorded {
		checkSequence(t, events)
	}

	// One call more than recorded.
	events := collect(t, play, llm.Request{Model: "gpt-4.1-mini"})
	e := lastError(t, events)
	if !errors.Is(e, llm.ErrCassetteExhausted) || e.Class != llm.ClassFatal {
		t.Errorf("exhausted: got %v (%s)", e, e.Class)
	}
	// It says a cassette answered (not the network), which one, which call
	// ran past its end and how to record it again.
	for _, want := range []string{"replay error (fatal): cassette exhausted: the replayed cassette testdata/session.jsonl",
		"holds 4 model calls and the run made call 5", "no endpoint was contacted", "--record testdata/session.jsonl"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("exhausted: %q lacks %q", e.Error(), want)
		}
	}
	if strings.Contains(e.Error(), "Post ") || strings.Contains(e.Error(), "provider error") {
		t.Errorf("exhausted reads as a network error: %s", e.Error())
	}
}

func TestCassetteMismatch(t *testing.T) {
	t.Parallel()
	tape := `{"request":{"method":"POST","path":"/v1/chat/completions","headers":{},"body":{"model":"gpt-4o","messages":[{"role":"user","content":"x"}]}},"response":{"status":200,"headers":{},"body":"data: [DONE]\n\n"}}` + "\n"
	tests := []struct {
		name string
		req  llm.Request
		want string
		base string // "" : http://replay.invalid/v1
	}{
		{"model", llm.Request{Model: "gpt-4.1", Messages: []llm.Message{{Role: llm.RoleUser}}}, `recorded model "gpt-4o", got "gpt-4.1"`, ""},
		{"messages", llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleSystem}, {Role: llm.RoleUser}}}, "recorded 1 messages [user], got 2 [system user]", ""},
		{"other base path", llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser}}}, "", "http://replay.invalid/api/v1"},
		{"match", llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser, Content: "other text"}}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cas, err := llm.LoadCassette(strings.NewReader(tape))
			if err != nil {
				t.Fatal(err)
			}
			base := tt.base
			if base == "" {
				base = "http://replay.invalid/v1"
			}
			p, err := llm.New(llm.Config{BaseURL: base, HTTPClient: &http.Client{Transport: cas.RoundTripper()}})
			if err != nil {
				t.Fatal(err)
			}
			events := collect(t, p, tt.req)
			last := events[len(events)-1]
			if tt.want == "" {
				if last.Type != llm.EventFinishStep || last.FinishReason != llm.FinishUnknown {
					t.Fatalf("want a clean end, got %s", dump(events))
				}
				return
			}
			e := lastError(t, events)
			if !errors.Is(e, llm.ErrCassetteMismatch) || e.Class != llm.ClassFatal || !strings.Contains(e.Error(), tt.want) {
				t.Errorf("got %v, want mismatch containing %q", e, tt.want)
			}
			if msg := e.Error(); !strings.HasPrefix(msg, "replay error (fatal): cassette mismatch: the replayed cassette: model call 1 differs") ||
				strings.Contains(msg, "Post ") || !strings.Contains(msg, "--record FILE") {
				t.Errorf("mismatch does not read as a replay's: %s", msg)
			}
		})
	}
}

func TestLoadCassetteBadLine(t *testing.T) {
	t.Parallel()
	_, err := llm.LoadCassette(strings.NewReader("{}\nnot json\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("got %v, want an error naming line 2", err)
	}
}

// lastError returns the *llm.Error of the final error event.
func lastError(t *testing.T, events []llm.Event) *llm.Error {
	t.Helper()
	last := events[len(events)-1]
	if last.Type != llm.EventError {
		t.Fatalf("last event is %s, want error: %s", last.Type, dump(events))
	}
	var e *llm.Error
	if !errors.As(last.Err, &e) {
		t.Fatalf("error event carries %T", last.Err)
	}
	return e
}

func TestCheckSequence(t *testing.T) {
	t.Parallel()
	start, finish := llm.Event{Type: llm.EventStart}, llm.Event{Type: llm.EventFinishStep, FinishReason: llm.FinishStop}
	call := llm.Event{Type: llm.EventToolCall, ToolCall: &llm.ToolCall{ID: "c"}}
	tests := []struct {
		name   string
		events []llm.Event
		ok     bool
	}{
		{"minimal", []llm.Event{start, finish}, true},
		{"bare tool-call", []llm.Event{start, call, finish}, true},
		{"no start", []llm.Event{finish}, false},
		{"no end", []llm.Event{start}, false},
		{"event after finish", []llm.Event{start, finish, finish}, false},
		{"delta outside part", []llm.Event{start, {Type: llm.EventTextDelta, ID: "t"}, finish}, false},
		{"unclosed text", []llm.Event{start, {Type: llm.EventTextStart, ID: "t"}, finish}, false},
		{"call inside its input", []llm.Event{start, {Type: llm.EventToolInputStart, ID: "c"}, call, finish}, false},
		{"open input before error", []llm.Event{start, {Type: llm.EventToolInputStart, ID: "c"},
			{Type: llm.EventError, Err: &llm.Error{Class: llm.ClassRetryable}}}, true},
		{"plain error", []llm.Event{start, {Type: llm.EventError, Err: errors.New("x")}}, false},
	}
	for _, tt := range tests {
		err := llm.CheckSequence(tt.events)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, llm.ErrBrokenSequence)) {
			t.Errorf("%s: got %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

// TestReplayMatchesResponsesInput: on the Responses API the kinds of the
// input items must match, as the roles of messages do.
func TestReplayMatchesResponsesInput(t *testing.T) {
	t.Parallel()
	rec := `{"model":"gpt-5.1","input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"c"},{"type":"function_call_output","call_id":"c"}]}`
	c := &llm.Cassette{Exchanges: []llm.Exchange{{
		Request:  llm.RecordedRequest{Method: "POST", Path: "/v1/responses", Body: json.RawMessage(rec)},
		Response: llm.RecordedResponse{Status: 200, Body: "data: {}\n\n"},
	}}}
	for body, wantErr := range map[string]bool{
		rec: false,
		`{"model":"gpt-5.1","input":[{"role":"user","content":"q"}]}`: true,
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://x/v1/responses", strings.NewReader(body))
		resp, err := c.RoundTripper().RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
		if got := errors.Is(err, llm.ErrCassetteMismatch); got != wantErr {
			t.Errorf("body %s: err %v, want mismatch %v", body, err, wantErr)
		}
	}
}

// TestCassetteKeepsBinaryBodies: a Bedrock event stream (not UTF-8) is
// recorded in hex and replayed byte for byte; a JSON string would turn
// its CRC bytes into U+FFFD.
func TestCassetteKeepsBinaryBodies(t *testing.T) {
	t.Parallel()
	reply := llmtest.EventStream(llmtest.AnthropicTurn{Text: "framed"}.Reply())
	srv := llmtest.NewServer(t, reply)
	var tape bytes.Buffer
	client := &http.Client{Transport: llm.NewRecorder(&tape, srv.Client().Transport)}
	read := func(c *http.Client, url string) []byte {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{}`))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return b.Bytes()
	}
	live := read(client, srv.URL()+"/model/m/invoke-with-response-stream")
	if !bytes.Equal(live, reply.Body) || !strings.Contains(tape.String(), `"body_hex":"`) {
		t.Fatalf("recorded %q", tape.String())
	}
	c, err := llm.LoadCassette(&tape)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(&http.Client{Transport: c.RoundTripper()}, "http://replay/v1/model/m/invoke-with-response-stream"); !bytes.Equal(got, reply.Body) {
		t.Errorf("replayed %d bytes differ from the %d recorded", len(got), len(reply.Body))
	}
}
