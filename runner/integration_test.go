package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// These tests drive sessions through the real OpenAI-compatible provider
// against the llmtest fake server.

func providerFor(t *testing.T, srv *llmtest.Server) *llm.Provider {
	t.Helper()
	p, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "test", HTTPClient: srv.Client(), IdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIntegrationToolUseRetryAndCaseInsensitiveName(t *testing.T) {
	t.Parallel()
	cut := llmtest.Turn{Text: "I will read the file now, then fix it"}.SSE()
	srv := llmtest.NewServer(t,
		llmtest.HTTPError(http.StatusTooManyRequests, `{"error":{"message":"slow down","type":"rate_limit"}}`, "Retry-After", "0"),
		llmtest.Reply{Body: cut, Cut: true, CutAfter: len(cut) / 2},
		llmtest.ToolCalls(llmtest.Call("READ", `{"path":"a.go"}`)),
		llmtest.ToolCalls(llmtest.Call("nosuch", `{}`)),
		llmtest.Text("The bug is fixed."),
	)
	read := &fakeTool{name: "read"}
	sink := &recSink{}
	cfg := testConfig(providerFor(t, srv), sink, read, &fakeTool{name: "write"})
	res := runTest(t, cfg)
	if res.Status != event.StatusSuccess || res.FinalMessage != "The bug is fixed." || res.Steps != 3 {
		t.Fatalf("result %+v", res)
	}
	if read.count() != 1 || string(read.calls[0].Input) != `{"path":"a.go"}` {
		t.Fatalf("read calls %+v", read.calls)
	}
	if r := sink.of("retry"); len(r) != 2 || r[1].(event.Retry).ErrorClass != "retryable" || r[1].(event.Retry).Attempt != 2 {
		t.Errorf("retry events %+v", r)
	}
	for _, p := range sink.of("text") {
		if strings.Contains(p.(event.Text).Text, "I will read") && res.FinalMessage == p.(event.Text).Text {
			t.Errorf("the cut attempt's text became the final message")
		}
	}
	started := sink.of("tool.started")[0].(event.ToolStarted)
	if started.Tool != "read" || started.ToolAsSent != "READ" {
		t.Errorf("tool.started = %+v", started)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Messages()
	if got := last[len(last)-1]["content"].(string); !strings.HasPrefix(got, `Error: unknown tool "nosuch"`) {
		t.Errorf("unknown tool result = %q", got)
	}
	assertWirePrefix(t, reqs[2:])
	if string(reqs[1].Raw) != string(reqs[2].Raw) {
		t.Errorf("the retried request differs from the cut one")
	}
}

// assertWirePrefix checks that each request's messages, as sent on the
// wire, begin with the previous request's messages.
func assertWirePrefix(t *testing.T, reqs []llmtest.RecordedRequest) {
	t.Helper()
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1].Messages(), reqs[i].Messages()
		for j := range prev {
			a, _ := json.Marshal(prev[j])
			b, _ := json.Marshal(cur[j])
			if string(a) != string(b) {
				t.Fatalf("request %d message %d changed on the wire:\n%s\n%s", i, j, a, b)
			}
		}
	}
}

func TestIntegrationOverflowCompactionAndStructuredOutput(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.HTTPError(http.StatusBadRequest, `{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}`),
		llmtest.Text("SUMMARY: nothing done yet"),
		llmtest.ToolCalls(llmtest.Call(StructuredOutputTool, `{"fixed":"no"}`)),
		llmtest.ToolCalls(llmtest.Call(StructuredOutputTool, `{"fixed":true,"files":["a.go"]}`)),
	)
	sink := &recSink{}
	cfg := testConfig(providerFor(t, srv), sink)
	cfg.OutputSchema = json.RawMessage(outSchema)
	res := runTest(t, cfg)
	if res.Status != event.StatusSuccess || res.Compactions != 1 || string(res.StructuredOutput) != `{"fixed":true,"files":["a.go"]}` {
		t.Fatalf("result %+v", res)
	}
	reqs := srv.Requests()
	if tc := reqs[2].Body["tool_choice"]; tc != "required" {
		t.Errorf("tool_choice = %v", tc)
	}
	if msgs := reqs[2].Messages(); len(msgs) != 2 || !strings.Contains(msgs[1]["content"].(string), "SUMMARY: nothing done yet") {
		t.Errorf("history after compaction = %v", msgs)
	}
}

func TestIntegrationCancelMidStream(t *testing.T) {
	t.Parallel()
	body := llmtest.Turn{Text: "I am working on it and will take a while"}.SSE()
	srv := llmtest.NewServer(t, llmtest.Reply{Body: body, Stall: true, StallAfter: len(body) / 2})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sink := &recSink{}
	var log bytes.Buffer
	w := event.NewWriter(&log, "run-1")
	m := &textWatcher{inner: providerFor(t, srv), onDelta: cancel}
	res, err := Run(ctx, testConfig(m, event.Multi(sink, w)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != event.StatusCancelled || res.FinalMessage != "" || res.RunError().Class != event.ClassCancelled {
		t.Fatalf("result %+v", res)
	}
	if got := sink.types(); got[len(got)-1] != "step.finished" {
		t.Errorf("events %v", got)
	}
	finishLog(t, w, &log, res) // the final record the pipeline writes
}

// textWatcher cancels the run once the first text delta arrives.
type textWatcher struct {
	inner   Model
	onDelta func()
}

func (w *textWatcher) Stream(ctx context.Context, req llm.Request) iter.Seq[llm.Event] {
	return func(yield func(llm.Event) bool) {
		for ev := range w.inner.Stream(ctx, req) {
			if ev.Type == llm.EventTextDelta {
				w.onDelta()
			}
			if !yield(ev) {
				return
			}
		}
	}
}

// TestBuiltinToolsSession runs the benchmark's session with the real
// built-in tools behind the permission guard: every call must succeed, and
// a call outside the rules must come back as a denial.
func TestBuiltinToolsSession(t *testing.T) {
	t.Parallel()
	root := makeRepo(t, 1000)
	var scripts []script
	for i := range 15 {
		name, args := stepCall(i, true)
		scripts = append(scripts, sc(call(fmt.Sprintf("c%d", i), name, args), finish(llm.FinishToolCalls, 10, 1)))
	}
	scripts = append(scripts, sc(call("x", "bash", `{"command":"rm -rf /"}`), finish(llm.FinishToolCalls, 10, 1)))
	sink := &recSink{}
	cfg := testConfig(newModel(scripts...), sink, builtinTools(root)...)
	cfg.WorkTree = root
	res := runTest(t, cfg)
	if res.Status != event.StatusSuccess || res.Denials != 1 {
		t.Fatalf("result %+v", res)
	}
	for _, f := range sink.of("tool.failed") {
		if ft := f.(event.ToolFailed); ft.Tool != "bash" || !ft.Denied {
			t.Errorf("tool failed: %+v", ft)
		}
	}
	if got := len(sink.of("tool.completed")); got != 15 {
		t.Errorf("tool.completed = %d, want 15", got)
	}
}

// The permission ruleset is the Policy the pipeline passes in.
var _ Policy = permission.Ruleset(nil)

// TestIntegrationCancelDuringToolKeepsUsage: the provider sends a tool call,
// then its usage chunk and [DONE] at once; the run is cancelled while the
// tool runs (here the moment the usage has reached the runner). The step
// keeps the usage the stream brought before the cancel: its tokens and the
// run's cost are known, not lost.
func TestIntegrationCancelDuringToolKeepsUsage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		price *float64
	}{{"priced", ptr(0.01)}, {"unpriced", nil}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, llmtest.ToolCalls(llmtest.Call("slow", `{}`)), llmtest.Text("not reached"))
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			slow := &fakeTool{name: "slow", run: func(ctx context.Context, _ tools.Call) (tools.Result, error) {
				select {
				case <-ctx.Done(): // the usage arrived while this ran
					return tools.Result{}, ctx.Err()
				case <-time.After(60 * time.Second): // it never did: the stream was not read meanwhile (generous: a loaded -race run is slow to read it)
					return tools.Result{Output: "slept"}, nil
				}
			}}
			m := &finishWatcher{inner: providerFor(t, srv), onFinish: cancel}
			sink := &recSink{}
			cfg := testConfig(m, sink, slow)
			cfg.Pricer = fixedPricer{perCall: tt.price}
			res, err := Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			// A priced model's cost is known; an unpriced one's stays
			// unknown (null), never 0.
			known := tt.price != nil
			if res.Status != event.StatusCancelled || res.Tokens.Input != 100 || (res.CostUSD != nil) != known {
				t.Fatalf("result %+v (cost %v): want cancelled with the 100 input tokens, cost known %v", res, res.CostUSD, known)
			}
			steps := sink.of("step.finished")
			if len(steps) != 1 {
				t.Fatalf("step.finished events %+v", steps)
			}
			if st := steps[0].(event.StepFinished); st.TokensUnknown || st.Tokens.Input != 100 || (st.CostUSD != nil) != known {
				t.Errorf("step.finished %+v (cost %v): want the usage that came before the cancel, cost known %v", st, st.CostUSD, known)
			}
		})
	}
}

// finishWatcher calls onFinish when the provider has read the model's
// finish-step event (with the usage), before handing it on.
type finishWatcher struct {
	inner    Model
	onFinish func()
}

func (w *finishWatcher) Stream(ctx context.Context, req llm.Request) iter.Seq[llm.Event] {
	return func(yield func(llm.Event) bool) {
		for ev := range w.inner.Stream(ctx, req) {
			if ev.Type == llm.EventFinishStep {
				w.onFinish()
			}
			if !yield(ev) {
				return
			}
		}
	}
}
