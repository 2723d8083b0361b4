package telemetry

import (
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/telemetry/otlptest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// exportRun sends a one-step run, a log record and its metrics through
// the exporters the environment names, and flushes them.
func exportRun(t *testing.T) {
	t.Helper()
	tel, err := Setup(t.Context(), os.Getenv, "1")
	if err != nil || tel == nil {
		t.Fatalf("Setup = %v, %v", tel, err)
	}
	s := tel.Sink("r")
	for _, p := range []event.Payload{event.RunStarted{Task: "t", Model: "m"}, event.StepStarted{Step: 1},
		event.StepFinished{Step: 1, FinishReason: "stop"}, event.RunFinished{Status: event.StatusSuccess}} {
		if err := s.Emit(p); err != nil {
			t.Fatal(err)
		}
	}
	if h := tel.LogHandler(); h != nil {
		slog.New(h).Warn("a diagnostic")
	}
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestExportOverGRPC: OTEL_EXPORTER_OTLP_PROTOCOL=grpc sends all three
// signals to an OTLP/gRPC receiver.
func TestExportOverGRPC(t *testing.T) {
	rcv := otlptest.StartGRPC(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_LOGS_EXPORTER", "otlp")
	exportRun(t)
	got := names(rcv.Spans())
	slices.Sort(got)
	if strings.Join(got, ",") != "chat m,invoke_agent t" {
		t.Errorf("spans %v, want chat m and invoke_agent t", got)
	}
	if len(rcv.Metrics()) == 0 || len(rcv.Logs()) != 1 {
		t.Errorf("%d metrics and %d logs over gRPC, want some and 1", len(rcv.Metrics()), len(rcv.Logs()))
	}
}

// TestProtocolPerSignal: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL overrides
// OTEL_EXPORTER_OTLP_PROTOCOL for traces only, as the specification says.
func TestProtocolPerSignal(t *testing.T) {
	grpcRcv, httpRcv := otlptest.StartGRPC(t), otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", grpcRcv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", httpRcv.URL+"/v1/metrics")
	exportRun(t)
	if len(grpcRcv.Spans()) != 2 || len(httpRcv.Spans()) != 0 {
		t.Errorf("spans: %d over gRPC, %d over HTTP; want 2 and 0", len(grpcRcv.Spans()), len(httpRcv.Spans()))
	}
	if len(httpRcv.Metrics()) == 0 || len(grpcRcv.Metrics()) != 0 {
		t.Errorf("metrics: %d over HTTP, %d over gRPC; want some and 0", len(httpRcv.Metrics()), len(grpcRcv.Metrics()))
	}
}

// TestUnsupportedExporterSettings: a value the runner has no exporter for
// (Prometheus: a short-lived process is gone before a scrape) is an error
// naming the variable and the supported values.
func TestUnsupportedExporterSettings(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_METRICS_EXPORTER": "prometheus"}, `OTEL_METRICS_EXPORTER="prometheus": supported values are otlp, console and none`},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, `OTEL_TRACES_EXPORTER="zipkin": supported values are otlp, console and none`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			`OTEL_EXPORTER_OTLP_PROTOCOL="http/json": supported values are http/protobuf and grpc`},
		{map[string]string{"OTEL_LOGS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "thrift"},
			`OTEL_EXPORTER_OTLP_LOGS_PROTOCOL="thrift": supported values are http/protobuf and grpc`},
	} {
		tel, err := Setup(t.Context(), func(k string) string { return c.env[k] }, "1")
		if tel != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Setup(%v) = %v, %v; want the error %q", c.env, tel, err, c.want)
		}
	}
}

// TestBinaryLinksNoPrometheus: the runner's binary links neither
// autoexport nor the Prometheus client it pulls in (1.5 MB and an init
// that registers collectors in every run; DESIGN.md, "Telemetry").
func TestBinaryLinksNoPrometheus(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "github.com/seed43ef5acb/runner/cmd/runner").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp") {
		t.Fatalf("the binary does not link the OTLP exporter: the listing is wrong (%d packages)", len(deps))
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/prometheus/") || strings.HasPrefix(d, "go.opentelemetry.io/contrib/exporters/autoexport") {
			t.Errorf("the runner links %s", d)
		}
	}
}
