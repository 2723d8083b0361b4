package e2e

import (
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/seed43ef5acb/runner/internal/telemetry/otlptest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// The W3C trace context a CI system hands the batch.
const (
	ciTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	ciSpan  = "00f067aa0ba902b7"
)

// TestBatchTelemetry runs the batch example over its three demo
// repositories through the built binary, with the OTLP exporters pointed
// at an in-process receiver and a scripted model that answers as a dated
// snapshot of the model asked for (the log's step.finished and the chat
// spans name that snapshot). It checks, span by span: the batch's
// span under TRACEPARENT links each repository's invoke_agent span; each
// run's chat and execute_tool spans are its children with the GenAI
// conventions' attributes; every model request names its chat span in
// traceparent; the metrics count three runs and nine steps; and each
// repository's diagnostic log (at --log-level debug) arrives tagged with
// its id.
func TestBatchTelemetry(t *testing.T) {
	t.Parallel()
	dir := batchExampleDir(t)
	const answered = "gpt-4.1-mini-2025-04-14"
	srv := llmtest.NewServerFunc(t, func(req llmtest.RecordedRequest) llmtest.Reply {
		return batchModel(req, answered)
	})
	rcv := otlptest.Start(t)
	env := append(baseEnv(t), "OPENAI_API_KEY=sk-scripted-not-a-real-key",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL, "OTEL_METRIC_EXPORT_INTERVAL=600000", "OTEL_LOGS_EXPORTER=otlp",
		"TRACEPARENT=00-"+ciTrace+"-"+ciSpan+"-01")
	res := runRunner(t, dir, env, "--log-level", "debug", "batch", "run", "batch.yaml", "--out", "out", "--base-url", srv.URL())
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", res.code, res.stderr)
	}

	spans := rcv.Spans()
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		byID[hex.EncodeToString(s.GetSpanId())] = s
		if got := hex.EncodeToString(s.GetTraceId()); got != ciTrace {
			t.Errorf("span %q is in trace %s, not TRACEPARENT's", s.GetName(), got)
		}
	}
	var batch *tracepb.Span
	for _, s := range spans {
		if s.GetName() == "batch batch.yaml" {
			if batch != nil {
				t.Fatal("two batch spans")
			}
			batch = s
		}
	}
	if batch == nil {
		t.Fatalf("no batch span among %v", spanNames(spans))
	}
	if hex.EncodeToString(batch.GetParentSpanId()) != ciSpan || otlptest.Attrs(batch.GetAttributes())["runner.batch.name"] != "batch.yaml" {
		t.Errorf("batch span: parent %x, attributes %v", batch.GetParentSpanId(), otlptest.Attrs(batch.GetAttributes()))
	}

	linked := map[string]bool{}
	for _, l := range batch.GetLinks() {
		linked[hex.EncodeToString(l.GetSpanId())] = true
	}
	chats := map[string]bool{} // trace-span of every chat span, as traceparent names it
	for _, id := range batchExampleIDs {
		recs := readEvents(t, filepath.Join(dir, "out", id, "events.jsonl"))
		runID := recs[0].RunID
		for _, f := range ofType[event.StepFinished](t, recs) {
			if f.Model != answered {
				t.Errorf("%s: step %d finished with model %q in the log, want %q", id, f.Step, f.Model, answered)
			}
		}
		var run *tracepb.Span
		for _, s := range spans {
			if s.GetName() == "invoke_agent add-editorconfig" && otlptest.Attrs(s.GetAttributes())["gen_ai.conversation.id"] == runID {
				run = s
			}
		}
		if run == nil {
			t.Errorf("%s: no invoke_agent span with gen_ai.conversation.id %s", id, runID)
			continue
		}
		runSpan := hex.EncodeToString(run.GetSpanId())
		if !linked[runSpan] {
			t.Errorf("%s: the batch span does not link the run's span", id)
		}
		wantAttrs(t, id, run, map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "add-editorconfig",
			"runner.run.id": runID, "gen_ai.request.model": "gpt-4.1-mini", "gen_ai.provider.name": "openai",
			"server.address": "127.0.0.1", "runner.status": "success", "runner.steps": "3", "runner.files_changed": "1"})
		if hex.EncodeToString(run.GetParentSpanId()) != ciSpan {
			t.Errorf("%s: run span parent %x, want TRACEPARENT's span", id, run.GetParentSpanId())
		}
		var children []string
		for _, s := range spans {
			if hex.EncodeToString(s.GetParentSpanId()) != runSpan {
				continue
			}
			children = append(children, s.GetName())
			step := otlptest.Attrs(s.GetAttributes())["runner.step"]
			switch s.GetName() {
			case "chat gpt-4.1-mini":
				chats[hex.EncodeToString(s.GetTraceId())+"-"+hex.EncodeToString(s.GetSpanId())] = true
				reason := map[string]string{"1": "tool-calls", "2": "tool-calls", "3": "stop"}[step]
				wantAttrs(t, id+" chat step "+step, s, map[string]string{"gen_ai.operation.name": "chat",
					"gen_ai.request.model": "gpt-4.1-mini", "gen_ai.response.model": answered,
					"gen_ai.provider.name": "openai", "gen_ai.response.finish_reasons": reason})
				if s.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
					t.Errorf("%s chat step %s: kind %v, want client", id, step, s.GetKind())
				}
			case "execute_tool read", "execute_tool write":
				tool := strings.TrimPrefix(s.GetName(), "execute_tool ")
				wantAttrs(t, id+" "+s.GetName(), s, map[string]string{"gen_ai.operation.name": "execute_tool",
					"gen_ai.tool.name": tool, "gen_ai.tool.call.id": "call_" + tool, "gen_ai.tool.type": "function",
					"runner.permission.verdict": "allowed"})
			}
		}
		slices.Sort(children)
		want := []string{"chat gpt-4.1-mini", "chat gpt-4.1-mini", "chat gpt-4.1-mini", "execute_tool read", "execute_tool write"}
		if !slices.Equal(children, want) {
			t.Errorf("%s: the run's child spans are %v, want %v", id, children, want)
		}
	}
	if len(batch.GetLinks()) != len(batchExampleIDs) {
		t.Errorf("the batch span has %d links, want %d", len(batch.GetLinks()), len(batchExampleIDs))
	}

	reqs := srv.Requests()
	if len(reqs) != 9 {
		t.Fatalf("%d model requests, want 9", len(reqs))
	}
	for i, r := range reqs {
		if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "runner/") {
			t.Errorf("request %d: User-Agent %q", i, ua)
		}
		p := strings.Split(r.Header.Get("Traceparent"), "-")
		if len(p) != 4 || !chats[p[1]+"-"+p[2]] {
			t.Errorf("request %d: traceparent %q names no chat span", i, r.Header.Get("Traceparent"))
		}
	}

	logged := map[string]int{}
	for _, r := range rcv.Logs() {
		if r.GetBody().GetStringValue() == "stage finished" {
			logged[otlptest.Attrs(r.GetAttributes())["repo"]]++
		}
	}
	for _, id := range batchExampleIDs {
		if logged[id] == 0 {
			t.Errorf("no \"stage finished\" log record with repo=%s (by repo: %v)", id, logged)
		}
	}

	sums := map[string]int64{}
	for _, m := range rcv.Metrics() {
		sums[m.GetName()] += counterSum(m, "runner.status", "success")
	}
	if sums["runner.runs"] != 3 || sums["runner.steps"] != 9 || sums["runner.tool.calls"] != 6 {
		t.Errorf("runner.runs %d (success), runner.steps %d, runner.tool.calls %d; want 3, 9, 6",
			sums["runner.runs"], sums["runner.steps"], sums["runner.tool.calls"])
	}
	for _, name := range []string{"gen_ai.client.token.usage", "gen_ai.client.operation.duration", "runner.run.duration", "runner.tokens"} {
		if _, ok := sums[name]; !ok {
			t.Errorf("no metric %s", name)
		}
	}
}

// wantAttrs reports each attribute of s that differs from want.
func wantAttrs(t *testing.T, what string, s *tracepb.Span, want map[string]string) {
	t.Helper()
	got := otlptest.Attrs(s.GetAttributes())
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got[k], v)
		}
	}
}

// counterSum adds the points of an integer sum; where a point carries
// key, only those with value count.
func counterSum(m *metricspb.Metric, key, value string) int64 {
	var n int64
	for _, p := range m.GetSum().GetDataPoints() {
		if v, ok := otlptest.Attrs(p.GetAttributes())[key]; ok && v != value {
			continue
		}
		n += p.GetAsInt()
	}
	return n
}

func spanNames(spans []*tracepb.Span) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.GetName()
	}
	return out
}
