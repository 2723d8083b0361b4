package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/seed43ef5acb/runner/internal/telemetry/otlptest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// stepEvents are the events of one agent step with one tool call.
func stepEvents() []event.Payload {
	cost := 0.001
	return []event.Payload{
		event.StepStarted{Step: 1},
		event.Text{Step: 1, Text: "I run the tests."},
		event.StepFinished{Step: 1, FinishReason: "tool_calls", Tokens: event.Tokens{Input: 1000, Output: 50}, CostUSD: &cost},
		event.ToolStarted{Step: 1, CallID: "c1", Tool: "bash"},
		event.ToolCompleted{Step: 1, CallID: "c1", Tool: "bash", Output: "ok", Metadata: map[string]any{"exit_code": 0}},
	}
}

// BenchmarkStep measures what telemetry adds to a step: its events into
// the JSONL writer (baseline), the same with the sink of telemetry that no
// OTEL_* variable asked for (what a run without them pays: nothing is
// added to the sinks), and with traces and metrics exported to an
// in-process receiver. Compare ns/op within one run.
func BenchmarkStep(b *testing.B) {
	run := func(b *testing.B, sink event.Sink) {
		b.Helper()
		b.ReportAllocs()
		evs := stepEvents()
		for b.Loop() {
			for _, e := range evs {
				_ = sink.Emit(e)
			}
		}
	}
	b.Run("baseline", func(b *testing.B) { run(b, event.NewWriter(io.Discard, "bench")) })
	b.Run("no-otel-variables", func(b *testing.B) {
		tel, _ := Setup(b.Context(), func(string) string { return "" }, "bench")
		sinks := []event.Sink{event.NewWriter(io.Discard, "bench")}
		if tel != nil { // as the pipeline: a nil telemetry adds no sink
			sinks = append(sinks, tel.Sink("bench"))
		}
		run(b, event.Multi(sinks...))
	})
	b.Run("exported", func(b *testing.B) {
		rcv := otlptest.Start(b)
		b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
		tel, err := Setup(b.Context(), os.Getenv, "bench")
		if err != nil || tel == nil {
			b.Fatal(err)
		}
		defer func() { _ = tel.Shutdown(context.Background()) }()
		s := tel.Sink("bench")
		_ = s.Emit(event.RunStarted{Task: "bench", Model: "m"})
		run(b, event.Multi(event.NewWriter(io.Discard, "bench"), s))
	})
}

// BenchmarkModelRequest measures a model request on loopback through the
// plain transport and through Transport without telemetry (User-Agent
// only), the per-request cost a run without OTEL_* variables pays.
func BenchmarkModelRequest(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{}")) }))
	defer srv.Close()
	for name, rt := range map[string]http.RoundTripper{"plain": http.DefaultTransport, "no-otel-variables": Transport(nil, "bench", nil)} {
		b.Run(name, func(b *testing.B) {
			c := &http.Client{Transport: rt}
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequestWithContext(b.Context(), http.MethodPost, srv.URL, nil)
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
