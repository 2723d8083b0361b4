package llm_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// replyCase is one real variant of a reply kind: what a provider sends
// (status, headers, body) and what the step must come to. Source names where
// the variant comes from (provider docs, source code, a public report).
type replyCase struct {
	name   string
	source string
	reply  llmtest.Reply
	tools  []string
	want   replyView
}

// replyView is what a step comes to, for comparison.
type replyView struct {
	Text       string
	Reasoning  string
	Finish     llm.FinishReason // "" when the step ended in an error
	Class      llm.ErrorClass   // "" when it did not
	RetryAfter time.Duration
	Usage      *llm.Usage
	Calls      []string // "name arguments" with arguments compacted; "name !raw" when invalid
}

// runReplyCases serves every case through the real provider path (an
// llmtest server, go-openai, the adaptor) with a recorder in front, checks
// the stream contract and the outcome, then replays the recorded exchange
// from a cassette and checks that it yields the same events.
func runReplyCases(t *testing.T, cases []replyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.source == "" {
				t.Fatal("a reply case names its source")
			}
			srv := llmtest.NewServer(t, c.reply)
			var tools []llm.ToolDef
			for _, n := range c.tools {
				tools = append(tools, llm.ToolDef{Name: n})
			}
			req := llm.Request{Model: "m", Tools: tools}
			var tape bytes.Buffer
			live := collect(t, mustNew(t, llm.Config{BaseURL: srv.URL(),
				HTTPClient: &http.Client{Transport: llm.NewRecorder(&tape, srv.Client().Transport)}}), req)
			checkSequence(t, live)
			if diff := cmp.Diff(c.want, view(live)); diff != "" {
				t.Errorf("source %s\n(-want +got):\n%s\nevents:%s", c.source, diff, dump(live))
			}
			cas, err := llm.LoadCassette(&tape)
			if err != nil {
				t.Fatal(err)
			}
			replayed := collect(t, mustNew(t, llm.Config{BaseURL: srv.URL(), // the cassette answers: nothing is contacted
				HTTPClient: &http.Client{Transport: cas.RoundTripper()}}), req)
			// A cassette keeps the bytes, not how the connection ended, so a
			// cut replays as a clean end: the outcome must match, the
			// message may differ.
			if c.reply.Cut {
				if diff := cmp.Diff(view(live), view(replayed)); diff != "" {
					t.Errorf("replay differs (-live +replay):\n%s", diff)
				}
			} else if diff := eventsDiff(live, replayed); diff != "" {
				t.Errorf("replay differs (-live +replay):\n%s", diff)
			}
		})
	}
}

func view(events []llm.Event) replyView {
	var v replyView
	var text, reasoning strings.Builder
	for _, ev := range events {
		switch ev.Type {
		case llm.EventTextDelta:
			text.WriteString(ev.Delta)
		case llm.EventReasoningDelta:
			reasoning.WriteString(ev.Delta)
		case llm.EventToolCall:
			tc := ev.ToolCall
			if tc.ArgumentsInvalid {
				v.Calls = append(v.Calls, tc.Name+" !"+tc.ArgumentsRaw)
				continue
			}
			var buf bytes.Buffer
			_ = json.Compact(&buf, tc.Arguments)
			v.Calls = append(v.Calls, tc.Name+" "+buf.String())
		case llm.EventFinishStep:
			v.Finish, v.Usage = ev.FinishReason, ev.Usage
		case llm.EventError:
			e := ev.Err.(*llm.Error)
			v.Class, v.RetryAfter, v.Calls = e.Class, e.RetryAfter, nil
		}
	}
	v.Text, v.Reasoning = text.String(), reasoning.String()
	return v
}

// sse frames JSON payloads as data events and ends with [DONE].
func sse(payloads ...string) llmtest.Reply {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return llmtest.SSE(b.String())
}

// content is a chunk whose first choice streams text.
func content(s string) string {
	b, _ := json.Marshal(s)
	return `{"choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`
}

// finish is a chunk whose first choice ends with the given raw
// finish_reason JSON value.
func finish(raw string) string {
	return `{"choices":[{"index":0,"delta":{},"finish_reason":` + raw + `}]}`
}

// jsonError is an HTTP error reply with a JSON body.
func jsonError(status int, body string, header ...string) llmtest.Reply {
	return llmtest.HTTPError(status, body, header...)
}

func usage(in, out int64) *llm.Usage { return &llm.Usage{InputTokens: in, OutputTokens: out} }

// nativeCase is a replyCase for a native wire: the same reply and
// outcome, read by the anthropic or responses provider.
type nativeCase struct {
	name   string
	source string
	reply  llmtest.Reply
	want   replyView
}

// runNativeCases serves every case to the provider newWire makes for the
// server and checks the stream contract and the outcome. Tools read and
// list are offered.
func runNativeCases(t *testing.T, newWire func(llm.Config) (*llm.NativeProvider, error), cases []nativeCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.source == "" {
				t.Fatal("a reply case names its source")
			}
			srv := llmtest.NewServer(t, c.reply)
			p, err := newWire(llm.Config{BaseURL: srv.URL(), APIKey: "k", HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			var events []llm.Event
			req := llm.Request{Model: "m", Tools: []llm.ToolDef{{Name: "read"}, {Name: "list"}}}
			for ev := range p.Stream(t.Context(), req) {
				events = append(events, ev)
			}
			checkSequence(t, events)
			if diff := cmp.Diff(c.want, view(events)); diff != "" {
				t.Errorf("source %s\n(-want +got):\n%s\nevents:%s", c.source, diff, dump(events))
			}
		})
	}
}

// sseEvents frames JSON payloads as named SSE events, the event name
// taken from each payload's "type".
func sseEvents(payloads ...string) llmtest.Reply {
	return llmtest.SSE(sseEventsText(payloads...))
}

// sseEventsText is sseEvents' body.
func sseEventsText(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(p), &head)
		b.WriteString("event: " + head.Type + "\ndata: " + p + "\n\n")
	}
	return b.String()
}
