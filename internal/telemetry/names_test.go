package telemetry

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/seed43ef5acb/runner/internal/telemetry/otlptest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// everyEvent is a run with one event of each kind the sink handles.
func everyEvent() []event.Payload {
	cost := 0.5
	return []event.Payload{
		event.RunStarted{Task: "t", Model: "m", BaseURL: "https://api.openai.com/v1", Sandbox: &event.Sandbox{Mode: "auto", Layers: []string{"landlock"}}},
		event.StepStarted{Step: 1},
		event.Retry{Step: 1, Attempt: 1, ErrorClass: event.ClassRetryable, DelayMS: 5},
		event.Text{Step: 1, Text: "I build it."},
		event.StepFinished{Step: 1, FinishReason: "tool-calls", Tokens: event.Tokens{Input: 10, Output: 2}, CostUSD: &cost, Model: "m-2026"},
		event.ToolStarted{Step: 1, CallID: "c1", Tool: "bash", Input: []byte(`{"command":"make"}`)},
		event.ToolCompleted{Step: 1, CallID: "c1", Tool: "bash", Output: "ok", Metadata: map[string]any{"exit_code": 0}},
		event.ToolStarted{Step: 1, CallID: "c2", Tool: "write", MCP: &event.MCPTool{Server: "s"}},
		event.PermissionDenied{Step: 1, CallID: "c2", Tool: "write", Permission: "edit", Pattern: "x"},
		event.ToolFailed{Step: 1, CallID: "c2", Tool: "write", Error: "denied", Denied: true},
		event.Compaction{Step: 1, Reason: "overflow"},
		event.CheckStarted{Name: "test", Attempt: 1},
		event.CheckFinished{Name: "test", Attempt: 1, ExitCode: 1},
		event.GateFailed{Gate: event.GateSecret, Message: "a secret"},
		event.Publish{Target: event.PublishPullRequest, OK: true},
		event.RunFinished{Status: event.StatusFailed, Steps: 1, CostUSD: &cost, Error: &event.RunError{Class: event.ClassBlocked, Message: "blocked"}},
	}
}

// TestAttributeNames exports a run with every kind of event, inside a
// batch and with content capture on, and checks each attribute key and
// metric name: the runner's own start with "runner.", every other one is
// a name the semantic conventions define, read from the semconv
// package's source of the version the code imports.
func TestAttributeNames(t *testing.T) {
	known := conventionNames(t)
	rcv := otlptest.Start(t)
	otelEnv(t, rcv)
	t.Setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
	tel, err := Setup(t.Context(), os.Getenv, "1")
	if err != nil || tel == nil {
		t.Fatalf("Setup = %v, %v", tel, err)
	}
	end := tel.StartBatch("b.yaml")
	s := tel.Sink("r")
	for _, p := range everyEvent() {
		if err := s.Emit(p); err != nil {
			t.Fatal(err)
		}
	}
	end("")
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{} // key: where
	add := func(where string, kvs []*commonpb.KeyValue) {
		for _, kv := range kvs {
			seen[kv.GetKey()] = where
		}
	}
	for _, sp := range rcv.Spans() {
		add("span "+sp.GetName(), sp.GetAttributes())
		for _, ev := range sp.GetEvents() {
			add("event "+ev.GetName()+" of "+sp.GetName(), ev.GetAttributes())
		}
	}
	var metrics []string
	for _, m := range rcv.Metrics() {
		metrics = append(metrics, m.GetName())
		for _, p := range m.GetSum().GetDataPoints() {
			add("metric "+m.GetName(), p.GetAttributes())
		}
		for _, p := range m.GetHistogram().GetDataPoints() {
			add("metric "+m.GetName(), p.GetAttributes())
		}
	}
	for _, k := range []string{"gen_ai.response.model", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "runner.batch.name"} {
		if _, ok := seen[k]; !ok {
			t.Errorf("no %s exported: the check saw too little", k)
		}
	}
	for k, where := range seen {
		if !strings.HasPrefix(k, "runner.") && !known[k] {
			t.Errorf("%s: attribute %q is neither runner.* nor a semantic-conventions name", where, k)
		}
	}
	for _, m := range metrics {
		if !strings.HasPrefix(m, "runner.") && !known[m] {
			t.Errorf("metric %q is neither runner.* nor a semantic-conventions name", m)
		}
	}
}

// conventionNames are the attribute keys and metric names of the semconv
// version the code imports, from the package's source in the module
// cache.
func conventionNames(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", "go.opentelemetry.io/otel").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "semconv", "v"+path.Base(semconv.SchemaURL))
	known := map[string]bool{}
	keyRE := regexp.MustCompile(`attribute\.Key\("([a-z0-9_.]+)"\)`)
	nameRE := regexp.MustCompile(`return "([a-z0-9_.]+)"`)
	for _, f := range []string{"attribute_group.go", "genaiconv/metric.go"} {
		src, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []*regexp.Regexp{keyRE, nameRE} {
			for _, m := range re.FindAllStringSubmatch(string(src), -1) {
				known[m[1]] = true
			}
		}
	}
	if !known["gen_ai.request.model"] || !known["gen_ai.client.token.usage"] {
		t.Fatalf("read no convention names from %s", dir)
	}
	return known
}
