package runner

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// fuzzScripts turns bytes into model replies: each byte picks an event
// (ids and names from a small set, so parts collide and repeat).
func fuzzScripts(data []byte) []script {
	var scripts []script
	var cur []llm.Event
	names := []string{"read", "READ", "bash", "nope", StructuredOutputTool}
	args := []string{`{}`, `{"path":"a"}`, `{"x":`, `[1]`}
	classes := []llm.ErrorClass{llm.ClassRetryable, llm.ClassContextOverflow, llm.ClassFatal}
	reasons := []llm.FinishReason{llm.FinishStop, llm.FinishToolCalls, llm.FinishLength, llm.FinishContentFilter, llm.FinishUnknown, ""}
	for i, b := range data {
		id := fmt.Sprint(b >> 6)
		switch b % 11 {
		case 0:
			cur = append(cur, llm.Event{Type: llm.EventTextStart, ID: id})
		case 1:
			cur = append(cur, llm.Event{Type: llm.EventTextDelta, ID: id, Delta: "x"})
		case 2:
			cur = append(cur, llm.Event{Type: llm.EventTextEnd, ID: id})
		case 3:
			cur = append(cur, llm.Event{Type: llm.EventReasoningDelta, ID: id, Delta: "r"})
		case 4:
			cur = append(cur, llm.Event{Type: llm.EventToolInputStart, ID: id, ToolName: names[int(b)%len(names)]})
		case 5:
			cur = append(cur, llm.Event{Type: llm.EventToolInputDelta, ID: id, Delta: "{"})
		case 6, 7:
			cur = append(cur, call(id, names[int(b)%len(names)], args[i%len(args)])[3])
		case 8:
			cur = append(cur, finish(reasons[int(b)%len(reasons)], int64(b)*10, 1)...)
			scripts = append(scripts, script{events: cur})
			cur = nil
		case 9:
			cur = append(cur, fail(classes[int(b)%len(classes)], 0)...)
			scripts = append(scripts, script{events: cur})
			cur = nil
		case 10:
			scripts = append(scripts, script{events: cur}) // stream cut
			cur = nil
		}
	}
	return scripts
}

// FuzzSession feeds arbitrary event sequences through a session and checks
// its invariants: it returns a known status, every step that started
// finished, every committed tool part ended completed or error, and the
// history stayed append-only between compactions.
func FuzzSession(f *testing.F) {
	f.Add([]byte{4, 5, 6, 8, 0, 1, 2, 8})
	f.Add([]byte{9, 1, 6, 7, 8, 9, 10, 8})
	f.Add([]byte{6, 6, 8, 6, 8, 6, 8, 3, 8})
	statuses := []event.Status{event.StatusSuccess, event.StatusFailed, event.StatusError, event.StatusCancelled,
		event.StatusMaxSteps, event.StatusBudgetExceeded, event.StatusTimeout, event.StatusBlocked}
	f.Fuzz(func(t *testing.T, data []byte) {
		bash := &fakeTool{name: "bash", run: func(context.Context, tools.Call) (tools.Result, error) {
			panic("boom")
		}}
		m := newModel(fuzzScripts(data)...)
		sink := &recSink{}
		cfg := testConfig(m, sink, &fakeTool{name: "read"}, bash)
		cfg.Limits.MaxSteps = 12
		cfg.Windows = fixedPricer{window: 2000}
		if len(data) > 0 && data[0]%2 == 0 {
			cfg.OutputSchema = []byte(outSchema)
		}
		s := NewSession(cfg)
		res, err := s.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(statuses, res.Status) || (res.Status != event.StatusSuccess) != (res.Err != nil) {
			t.Fatalf("result %+v", res)
		}
		started, finished := len(sink.of("step.started")), len(sink.of("step.finished"))
		if started != finished || started != res.Steps {
			t.Fatalf("steps %d, started %d, finished %d: %v", res.Steps, started, finished, sink.types())
		}
		for _, msg := range s.Messages() {
			for _, tp := range msg.toolParts() {
				if !tp.finished() {
					t.Fatalf("unfinished tool part %+v", tp)
				}
			}
		}
		// Between compactions, step requests are append-only.
		var segment []llm.Request
		for _, req := range m.reqs() {
			if last := req.Messages[len(req.Messages)-1]; last.Content == compactionPrompt ||
				last.Content == omittedOutput {
				assertAppendOnly(t, segment)
				segment = nil
				continue
			}
			segment = append(segment, req)
		}
		assertAppendOnly(t, segment)
	})
}
