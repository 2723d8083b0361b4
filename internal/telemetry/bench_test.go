package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/telemetry/otlptest"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// benchSteps is the length of one benchmarked session.
const benchSteps = 40

// readTool answers every call with a small file's text.
type readTool struct{}

func (readTool) Info() tools.Info {
	return tools.Info{Name: "read", Description: "Read a file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
}

func (readTool) Run(context.Context, tools.Call) (tools.Result, error) {
	return tools.Result{Output: "package p\n\nfunc F() {}\n"}, nil
}

// session runs one benchmSteps-step session against srv as the pipeline
// wires it: Setup with getenv, the model client through Transport, the
// telemetry's sink beside the log when Setup started any. With plain set
// it is the runner without telemetry: no Setup, the bare transport.
func session(b *testing.B, srv *llmtest.Server, getenv func(string) string, plain bool) {
	b.Helper()
	rt := http.DefaultTransport
	sinks := []event.Sink{event.NewWriter(io.Discard, "bench")}
	if !plain {
		tel, err := Setup(b.Context(), getenv, "bench")
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = tel.Shutdown(context.WithoutCancel(b.Context())) }()
		run := tel.NewRun()
		rt = Transport(http.DefaultTransport, "bench", run)
		if run != nil {
			sinks = append(sinks, run.Sink("bench"))
		}
	}
	model, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "sk-bench", HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		b.Fatal(err)
	}
	res, err := runner.Run(b.Context(), runner.Config{
		Model: model, ModelName: "gpt-4.1-mini", WorkTree: b.TempDir(), Platform: "linux/amd64", Prompt: "Read the files.",
		Tools: []tools.Tool{readTool{}}, Sink: event.Multi(sinks...),
		Backoff: runner.Backoff{Base: time.Millisecond, Max: time.Millisecond, Attempts: 1},
	})
	if err != nil || res.Status != event.StatusSuccess || res.Steps != benchSteps {
		b.Fatalf("session: %v, %+v", err, res)
	}
}

// BenchmarkSessionStep measures a step of a 40-step session (a read tool
// call per step, the model a fake over loopback HTTP) three ways, in
// turn within each iteration so they share the machine's load:
//
//   - off: the runner without telemetry (no Setup, the bare transport);
//   - no-otel-variables: what a run pays when no OTEL_* variable is set
//     (Setup, the User-Agent transport, no sink added);
//   - exported: traces and metrics sent to an in-process OTLP receiver.
//
// It reports each variant's median ms/step, its allocations per step (the
// fake model's included: it shares the process) and the median
// per-iteration ratio no-otel-variables/off (1.00: no cost):
//
//	go test ./internal/telemetry -run '^$' -bench SessionStep -benchtime 15x
func BenchmarkSessionStep(b *testing.B) {
	replies := make([]llmtest.Reply, 0, benchSteps)
	for i := range benchSteps - 1 {
		replies = append(replies, llmtest.Turn{Text: "Next file.",
			ToolCalls: []llmtest.ToolCall{llmtest.Call("read", fmt.Sprintf(`{"path":"f%d.go"}`, i))}}.Reply())
	}
	replies = append(replies, llmtest.Turn{Text: "Done."}.Reply())
	rcv := otlptest.Start(b)
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL) // the exporters read the process environment
	b.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "600000")
	variants := []struct {
		name   string
		getenv func(string) string
		plain  bool
	}{
		{"off", os.Getenv, true},
		{"no-otel-variables", func(string) string { return "" }, false},
		{"exported", os.Getenv, false},
	}
	perStep := make([][]float64, len(variants))
	mallocs := make([]uint64, len(variants))
	var ratios []float64
	for i := 0; b.Loop(); i++ {
		got := make([]float64, len(variants))
		for k := range variants {
			j := (i + k) % len(variants) // a different variant first each time
			srv := llmtest.NewBenchServer(b, func(n int) llmtest.Reply { return replies[min(n, benchSteps-1)] })
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			start := time.Now()
			session(b, srv, variants[j].getenv, variants[j].plain)
			got[j] = float64(time.Since(start).Microseconds()) / 1000 / benchSteps
			runtime.ReadMemStats(&m1)
			mallocs[j] += m1.Mallocs - m0.Mallocs
		}
		for j := range variants {
			perStep[j] = append(perStep[j], got[j])
		}
		ratios = append(ratios, got[1]/got[0])
	}
	for j, v := range variants {
		allocs := float64(mallocs[j]) / float64(len(perStep[j])*benchSteps)
		b.ReportMetric(median(perStep[j]), v.name+"-ms/step")
		b.ReportMetric(allocs, v.name+"-allocs/step")
		b.Logf("%s: median %.3f ms/step, range %.3f-%.3f over %d; %.0f allocs/step", v.name, median(perStep[j]),
			slices.Min(perStep[j]), slices.Max(perStep[j]), len(perStep[j]), allocs)
	}
	b.ReportMetric(median(ratios), "no-otel/off")
	b.Logf("no-otel/off: median %.3f, range %.3f-%.3f", median(ratios), slices.Min(ratios), slices.Max(ratios))
	if len(rcv.Spans()) == 0 {
		b.Error("the exported variant sent no spans")
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
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
