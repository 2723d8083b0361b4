package telemetry

import (
	"context"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/seed43ef5acb/runner/internal/telemetry/otlptest"
	"github.com/seed43ef5acb/runner/runner/event"
)

const (
	parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpan  = "00f067aa0ba902b7"
)

// otelEnv points the exporters at r, as a user's OTEL_* variables would.
func otelEnv(t *testing.T, r *otlptest.Receiver) {
	t.Helper()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_LOGS_EXPORTER", "otlp")
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "600000") // Shutdown flushes
	t.Setenv("TRACEPARENT", "00-"+parentTrace+"-"+parentSpan+"-01")
}

// TestExportRun feeds a run's events to the sink with the exporters
// pointed at an in-process OTLP/HTTP receiver, and checks the spans,
// metrics and logs it decodes against the GenAI conventions' names.
func TestExportRun(t *testing.T) {
	rcv := otlptest.Start(t)
	otelEnv(t, rcv)
	var seen http.Header
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Header.Clone() }))
	defer model.Close()

	tel, err := Setup(t.Context(), os.Getenv, "1.2.3")
	if err != nil || tel == nil {
		t.Fatalf("Setup = %v, %v", tel, err)
	}
	run := tel.NewRun()
	sink := run.Sink("run-7")
	cost := 0.25
	emit := func(p event.Payload) {
		t.Helper()
		if err := sink.Emit(p); err != nil {
			t.Fatal(err)
		}
	}
	emit(event.RunStarted{Task: "fix-tests", Model: "gpt-test", BaseURL: "https://api.openai.com/v1",
		Sandbox: &event.Sandbox{Mode: "auto", Layers: []string{"landlock"}}})
	emit(event.StepStarted{Step: 1})
	emit(event.Retry{Step: 1, Attempt: 1, ErrorClass: event.ClassRetryable, DelayMS: 10})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, model.URL, nil)
	resp, err := (&http.Client{Transport: Transport(nil, "1.2.3", run)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	emit(event.StepFinished{Step: 1, FinishReason: "tool-calls", Tokens: event.Tokens{Input: 100, Output: 20, CacheRead: 40}, CostUSD: &cost,
		Model: "gpt-test-2026-01-01"})
	emit(event.ToolStarted{Step: 1, CallID: "call_1", Tool: "bash", Input: []byte(`{"command":"make"}`)})
	emit(event.ToolCompleted{Step: 1, CallID: "call_1", Tool: "bash", Output: "built", Metadata: map[string]any{"exit_code": 3}, DurationMS: 5})
	emit(event.ToolStarted{Step: 1, CallID: "call_2", Tool: "write"})
	emit(event.PermissionDenied{Step: 1, CallID: "call_2", Tool: "write", Permission: "edit", Pattern: ".github/x"})
	emit(event.ToolFailed{Step: 1, CallID: "call_2", Tool: "write", Error: "Permission denied", Denied: true})
	emit(event.CheckStarted{Name: "test", Attempt: 1})
	emit(event.CheckFinished{Name: "test", Attempt: 1, ExitCode: 1, Passed: false})
	emit(event.GateFailed{Gate: event.GateSecret, Message: "a secret in the patch"})
	emit(event.Publish{Target: event.PublishPullRequest, OK: true})
	emit(event.RunFinished{Status: event.StatusFailed, Steps: 1, Tokens: event.Tokens{Input: 100, Output: 20},
		Error: &event.RunError{Class: event.ClassBlocked, Message: "blocked"}})
	slog.New(tel.LogHandler()).Warn("retrying the model call", "attempt", 1)
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}

	spans := map[string]*tracepb.Span{}
	for _, s := range rcv.Spans() {
		spans[s.GetName()] = s
	}
	root := spans["invoke_agent fix-tests"]
	if root == nil {
		t.Fatalf("no invoke_agent span among %v", names(rcv.Spans()))
	}
	if hex.EncodeToString(root.GetTraceId()) != parentTrace || hex.EncodeToString(root.GetParentSpanId()) != parentSpan {
		t.Errorf("the root span is not parented by TRACEPARENT: trace %x parent %x", root.GetTraceId(), root.GetParentSpanId())
	}
	want := map[string]map[string]string{
		"invoke_agent fix-tests": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "fix-tests", "gen_ai.conversation.id": "run-7",
			"gen_ai.request.model": "gpt-test", "gen_ai.provider.name": "openai", "runner.status": "failed", "error.type": "blocked",
			"runner.sandbox.layers": "landlock"},
		"chat gpt-test": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-test", "gen_ai.response.model": "gpt-test-2026-01-01",
			"gen_ai.response.finish_reasons": "tool-calls",
			"gen_ai.usage.input_tokens":      "100", "gen_ai.usage.output_tokens": "20", "gen_ai.usage.cache_read.input_tokens": "40",
			"runner.cost.usd": "0.25"},
		"execute_tool bash":    {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.call.id": "call_1", "process.exit.code": "3", "runner.permission.verdict": "allowed", "runner.sandbox.layers": "landlock"},
		"execute_tool write":   {"gen_ai.tool.call.id": "call_2", "runner.permission.verdict": "denied", "runner.permission": "edit", "runner.permission.rule": "default deny"},
		"check test":           {"runner.check.name": "test", "runner.check.passed": "false", "process.exit.code": "1"},
		"gate secret":          {"runner.gate": "secret"},
		"publish pull_request": {"runner.publish.target": "pull_request"},
	}
	for name, attrs := range want {
		s := spans[name]
		if s == nil {
			t.Errorf("no span %q among %v", name, names(rcv.Spans()))
			continue
		}
		got := otlptest.Attrs(s.GetAttributes())
		for k, v := range attrs {
			if got[k] != v {
				t.Errorf("span %q: %s = %q, want %q", name, k, got[k], v)
			}
		}
		if name != "invoke_agent fix-tests" && string(s.GetParentSpanId()) != string(root.GetSpanId()) {
			t.Errorf("span %q is not a child of the run's span", name)
		}
	}
	if bash := spans["execute_tool bash"]; bash != nil {
		for _, k := range []string{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
			if v, ok := otlptest.Attrs(bash.GetAttributes())[k]; ok {
				t.Errorf("%s exported without OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: %q", k, v)
			}
		}
	}
	if chat := spans["chat gpt-test"]; chat == nil || len(chat.GetEvents()) != 1 || chat.GetEvents()[0].GetName() != "retry" {
		t.Errorf("the chat span lacks its retry event")
	}
	if ua := seen.Get("User-Agent"); ua != "runner/1.2.3" {
		t.Errorf("User-Agent = %q", ua)
	}
	tp := seen.Get("Traceparent")
	if chat := spans["chat gpt-test"]; chat != nil && !strings.Contains(tp, hex.EncodeToString(chat.GetSpanId())) || !strings.Contains(tp, parentTrace) {
		t.Errorf("traceparent %q does not name the chat span", tp)
	}
	metrics := map[string]bool{}
	for _, m := range rcv.Metrics() {
		metrics[m.GetName()] = true
	}
	for _, name := range []string{"gen_ai.client.token.usage", "gen_ai.client.operation.duration", "runner.tokens", "runner.cost",
		"runner.runs", "runner.steps", "runner.tool.calls", "runner.denials", "runner.checks", "runner.run.duration"} {
		if !metrics[name] {
			t.Errorf("no metric %s among %v", name, metrics)
		}
	}
	if logs := rcv.Logs(); len(logs) != 1 || logs[0].GetBody().GetStringValue() != "retrying the model call" {
		t.Errorf("logs = %v", logs)
	}
}

func names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.GetName())
	}
	return out
}

// TestNothingWithoutOtelVariables: with no OTEL_* variable Setup starts
// nothing, and the nil telemetry's sink and transport still work.
func TestNothingWithoutOtelVariables(t *testing.T) {
	t.Parallel()
	tel, err := Setup(t.Context(), func(string) string { return "" }, "1")
	if tel != nil || err != nil {
		t.Fatalf("Setup = %v, %v; want nothing", tel, err)
	}
	if _, ok := tel.Sink("r").(event.Discard); !ok {
		t.Error("the nil telemetry's sink is not event.Discard")
	}
	for _, env := range []map[string]string{
		{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"},
		{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"},
		{"OTEL_SERVICE_NAME": "x"},
	} {
		if tr, m, l := Signals(func(k string) string { return env[k] }); tr || m || l {
			t.Errorf("Signals(%v) = %v %v %v, want none", env, tr, m, l)
		}
	}
	if tr, m, l := Signals(func(k string) string { return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x"}[k] }); !tr || m || l {
		t.Errorf("a traces endpoint alone: %v %v %v, want traces only", tr, m, l)
	}
}

// TestBatchLinksRuns: a batch's span links the spans of its runs.
func TestBatchLinksRuns(t *testing.T) {
	rcv := otlptest.Start(t)
	otelEnv(t, rcv)
	tel, err := Setup(t.Context(), os.Getenv, "1")
	if err != nil || tel == nil {
		t.Fatalf("Setup = %v, %v", tel, err)
	}
	end := tel.StartBatch("nightly.yaml")
	for _, id := range []string{"a", "b"} {
		s := tel.Sink(id)
		_ = s.Emit(event.RunStarted{Task: "t", Model: "m"})
		_ = s.Emit(event.RunFinished{Status: event.StatusSuccess})
	}
	end("")
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	runs := map[string]bool{}
	var batch *tracepb.Span
	for _, s := range rcv.Spans() {
		switch s.GetName() {
		case "invoke_agent t":
			runs[hex.EncodeToString(s.GetSpanId())] = true
		case "batch nightly.yaml":
			batch = s
		}
	}
	if batch == nil || len(runs) != 2 {
		t.Fatalf("spans %v", names(rcv.Spans()))
	}
	linked := 0
	for _, l := range batch.GetLinks() {
		if runs[hex.EncodeToString(l.GetSpanId())] {
			linked++
		}
	}
	if linked != 2 {
		t.Errorf("the batch span links %d of the 2 runs", linked)
	}
}

// TestCaptureContent: with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
// set, tool arguments and results and the model's text are exported.
func TestCaptureContent(t *testing.T) {
	rcv := otlptest.Start(t)
	otelEnv(t, rcv)
	t.Setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
	tel, err := Setup(t.Context(), os.Getenv, "1")
	if err != nil || tel == nil {
		t.Fatalf("Setup = %v, %v", tel, err)
	}
	s := tel.Sink("r")
	for _, p := range []event.Payload{event.RunStarted{Task: "t", Model: "m"}, event.StepStarted{Step: 1},
		event.Text{Step: 1, Text: "I build it."}, event.Text{Step: 1, Text: "Then I test it."}, event.StepFinished{Step: 1, FinishReason: "tool-calls"},
		event.ToolStarted{CallID: "c", Tool: "bash", Input: []byte(`{"command":"make"}`)},
		event.ToolCompleted{CallID: "c", Tool: "bash", Output: "built"}, event.RunFinished{Status: event.StatusSuccess}} {
		_ = s.Emit(p)
	}
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, sp := range rcv.Spans() {
		attrs := otlptest.Attrs(sp.GetAttributes())
		switch sp.GetName() {
		case "execute_tool bash":
			if attrs["gen_ai.tool.call.arguments"] != `{"command":"make"}` || attrs["gen_ai.tool.call.result"] != "built" {
				t.Errorf("execute_tool attributes %v", attrs)
			}
		case "chat m":
			want := `[{"role":"assistant","parts":[{"type":"text","content":"I build it."},{"type":"text","content":"Then I test it."}],"finish_reason":"tool_call"}]`
			if got := attrs["gen_ai.output.messages"]; got != want {
				t.Errorf("gen_ai.output.messages = %s, want %s", got, want)
			}
		}
	}
}

// TestConcurrentRunsNameTheirOwnSpans: two runs at once (a batch with
// concurrency 2) share one Telemetry; each run's requests name its own
// chat span, whatever the other run did last.
func TestConcurrentRunsNameTheirOwnSpans(t *testing.T) {
	rcv := otlptest.Start(t)
	otelEnv(t, rcv)
	seen := map[string]string{} // X-Run: traceparent
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen[r.Header.Get("X-Run")] = r.Header.Get("Traceparent")
	}))
	defer srv.Close()
	tel, err := Setup(t.Context(), os.Getenv, "1")
	if err != nil || tel == nil {
		t.Fatalf("Setup = %v, %v", tel, err)
	}
	a, b := tel.NewRun(), tel.NewRun()
	sa, sb := a.Sink("a"), b.Sink("b")
	_ = sa.Emit(event.RunStarted{Task: "ta", Model: "ma"})
	_ = sb.Emit(event.RunStarted{Task: "tb", Model: "mb"})
	_ = sa.Emit(event.StepStarted{Step: 1})
	_ = sb.Emit(event.StepStarted{Step: 1}) // b's chat opens last
	for name, run := range map[string]*Run{"a": a, "b": b} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, nil)
		req.Header.Set("X-Run", name)
		resp, err := (&http.Client{Transport: Transport(nil, "1", run)}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for _, s := range []event.Sink{sa, sb} {
		_ = s.Emit(event.StepFinished{Step: 1, FinishReason: "stop"})
		_ = s.Emit(event.RunFinished{Status: event.StatusSuccess})
	}
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, s := range rcv.Spans() {
		run := map[string]string{"chat ma": "a", "chat mb": "b"}[s.GetName()]
		if run != "" && !strings.Contains(seen[run], hex.EncodeToString(s.GetSpanId())) {
			t.Errorf("run %s's request says traceparent %q, not its chat span %x", run, seen[run], s.GetSpanId())
		}
	}
}
