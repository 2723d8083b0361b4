package e2e

import (
	"encoding/hex"
	"path/filepath"
	"slices"
	"testing"

	"github.com/seed43ef5acb/runner/internal/telemetry/otlptest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestExecTelemetry runs the README's first command (the hello example,
// replayed) through the built binary with the OTLP exporters on and
// --log-level debug: the run's span under TRACEPARENT with its chat,
// execute_tool and check children, the metrics, and the diagnostic log
// all reach the in-process receiver.
func TestExecTelemetry(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	for _, p := range []string{"examples/hello/task.yaml", "examples/hello/session.jsonl"} {
		copyFileT(t, filepath.Join(repoRoot, p), filepath.Join(cwd, p))
	}
	copyDirT(t, filepath.Join(repoRoot, "examples/hello/project"), filepath.Join(cwd, "examples/hello/project"))
	rcv := otlptest.Start(t)
	env := append(baseEnv(t), "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL, "OTEL_LOGS_EXPORTER=otlp",
		"OTEL_METRIC_EXPORT_INTERVAL=600000", "TRACEPARENT=00-"+ciTrace+"-"+ciSpan+"-01")
	out := filepath.Join(t.TempDir(), "out")
	res := runRunner(t, cwd, env, append([]string{"--log-level", "debug"}, append(helloArgs, "--out", out)...)...)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", res.code, res.stderr)
	}
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))

	spans := rcv.Spans()
	var root string
	for _, s := range spans {
		if s.GetName() == "invoke_agent hello-fix" {
			root = hex.EncodeToString(s.GetSpanId())
			wantAttrs(t, "invoke_agent", s, map[string]string{"gen_ai.conversation.id": recs[0].RunID, "runner.status": "success",
				"gen_ai.request.model": "gpt-4.1-mini", "runner.steps": "4", "runner.files_changed": "1"})
			if hex.EncodeToString(s.GetParentSpanId()) != ciSpan || hex.EncodeToString(s.GetTraceId()) != ciTrace {
				t.Errorf("the run's span is not under TRACEPARENT: trace %x parent %x", s.GetTraceId(), s.GetParentSpanId())
			}
		}
	}
	if root == "" {
		t.Fatalf("no invoke_agent span among %v", spanNames(spans))
	}
	var children []string
	for _, s := range spans {
		if hex.EncodeToString(s.GetParentSpanId()) != root {
			continue
		}
		children = append(children, s.GetName())
		switch s.GetName() {
		case "execute_tool bash":
			wantAttrs(t, s.GetName(), s, map[string]string{"gen_ai.tool.call.id": "call_test", "process.exit.code": "0",
				"runner.permission.verdict": "allowed"})
		case "check tests":
			wantAttrs(t, s.GetName(), s, map[string]string{"runner.check.name": "tests", "runner.check.passed": "true", "process.exit.code": "0"})
		}
	}
	slices.Sort(children)
	want := []string{"chat gpt-4.1-mini", "chat gpt-4.1-mini", "chat gpt-4.1-mini", "chat gpt-4.1-mini",
		"check tests", "execute_tool bash", "execute_tool edit", "execute_tool read"}
	if !slices.Equal(children, want) {
		t.Errorf("the run's child spans are %v, want %v", children, want)
	}

	sums := map[string]int64{}
	for _, m := range rcv.Metrics() {
		sums[m.GetName()] += counterSum(m, "runner.status", string(event.StatusSuccess))
	}
	if sums["runner.runs"] != 1 || sums["runner.steps"] != 4 || sums["runner.tool.calls"] != 3 || sums["runner.checks"] != 1 {
		t.Errorf("runner.runs %d, runner.steps %d, runner.tool.calls %d, runner.checks %d; want 1, 4, 3, 1",
			sums["runner.runs"], sums["runner.steps"], sums["runner.tool.calls"], sums["runner.checks"])
	}
	stages := 0
	for _, r := range rcv.Logs() {
		if r.GetBody().GetStringValue() == "stage finished" {
			stages++
		}
	}
	if stages == 0 {
		t.Errorf("no \"stage finished\" record among %d log records", len(rcv.Logs()))
	}
}
