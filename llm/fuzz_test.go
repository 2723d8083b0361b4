package llm

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// frame runs b through the SSE adaptor.
func frame(b []byte) ([]byte, streamFacts, error) {
	var facts streamFacts
	out, err := io.ReadAll(newSSEReader(io.NopCloser(bytes.NewReader(b)), &facts, nil))
	return out, facts, err
}

func addCaseSeeds(f *testing.F) {
	f.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "cases", "*.sse"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("data: {\"choices\":[]}"))
	f.Add([]byte("event: error\ndata: oops\n\n"))
	f.Add([]byte("data: a\ndata: b\n\n: c\r\n\r\ndata: [DONE]\n\ndata: after\n"))
}

// FuzzSSEFraming checks the adaptor's output is always what go-openai's
// line reader handles without loss: only "data: <payload>\n\n" events, no
// payload that would trip its error-prefix path, [DONE] only last, and
// framing is stable (framing the output again changes nothing).
func FuzzSSEFraming(f *testing.F) {
	addCaseSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		out, facts, err := frame(in)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		events := strings.SplitAfter(string(out), "\n\n")
		if events[len(events)-1] != "" {
			t.Fatalf("output does not end with a blank line: %q", out)
		}
		events = events[:len(events)-1]
		for i, ev := range events {
			if !strings.HasPrefix(ev, "data: ") || strings.Count(ev, "\n") != 2 {
				t.Fatalf("event %d not a single data line: %q", i, ev)
			}
			p := strings.TrimSpace(strings.TrimPrefix(ev, "data:"))
			if strings.HasPrefix(p, `{"error":`) {
				t.Fatalf("event %d would take go-openai's error path: %q", i, ev)
			}
			if p == "[DONE]" && i != len(events)-1 {
				t.Fatalf("[DONE] at event %d of %d", i, len(events))
			}
			if p == "" {
				t.Fatalf("event %d: empty payload", i)
			}
		}
		if facts.Done != (len(events) > 0 && events[len(events)-1] == "data: [DONE]\n\n") {
			t.Fatalf("Done=%v but output %q", facts.Done, out)
		}
		again, _, _ := frame(out)
		if !bytes.Equal(again, out) {
			t.Fatalf("framing is not stable:\n%q\n%q", out, again)
		}
	})
}

// FuzzStream feeds arbitrary bodies through the adaptor and the chunk
// decoder and assembler: whatever arrives, the events keep the stream
// contract and nothing panics.
func FuzzStream(f *testing.F) {
	addCaseSeeds(f)
	f.Add([]byte(`data: {"choices":[{"delta":{"tool_calls":[{"index":"0","id":7,"function":{"name":["x"],"arguments":{"a":1}}}]},"finish_reason":3}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, facts, _ := frame(in)
		events := []Event{{Type: EventStart}}
		a := newAssembler([]ToolDef{{Name: "read"}, {Name: "Read"}, {Name: "bash"}},
			func(ev Event) bool { events = append(events, ev); return true })
		alive := true
		for _, l := range strings.Split(string(out), "\n") {
			p := strings.TrimPrefix(l, "data: ")
			if p == "" || p == "[DONE]" {
				continue
			}
			if alive = a.payload([]byte(p)); !alive {
				break
			}
		}
		if alive {
			a.end(facts.Done)
		}
		if err := CheckSequence(events); err != nil {
			t.Fatalf("%v\ninput %q", err, in)
		}
	})
}
