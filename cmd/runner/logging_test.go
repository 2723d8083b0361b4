package main

import (
	"io"
	"os"
	"slices"
	"testing"

	"github.com/seed43ef5acb/runner/internal/telemetry/otlptest"
)

// TestTelemetryLogsFollowLogLevel: the OTel logs exporter gets the
// records --log-level lets through to stderr, with their attributes, and
// no others.
func TestTelemetryLogsFollowLogLevel(t *testing.T) {
	rcv := otlptest.Start(t)
	for k, v := range map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_LOGS_EXPORTER": "otlp",
		"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"} {
		t.Setenv(k, v) // the SDK's exporters read the process environment
	}
	tel, log, stop := startTelemetry(t.Context(), Environ(os.Environ()), newLogger("warn", "text", io.Discard))
	if tel == nil {
		t.Fatal("no telemetry with OTEL_LOGS_EXPORTER=otlp")
	}
	log.Debug("a debug record")
	log.Info("an info record")
	log.Warn("a warning")
	log.With("repo", "svc-a").Error("an error")
	stop()
	var bodies []string
	for _, r := range rcv.Logs() {
		bodies = append(bodies, r.GetBody().GetStringValue())
		if r.GetBody().GetStringValue() == "an error" && otlptest.Attrs(r.GetAttributes())["repo"] != "svc-a" {
			t.Errorf("the error's attributes %v lack repo=svc-a", otlptest.Attrs(r.GetAttributes()))
		}
	}
	if want := []string{"a warning", "an error"}; !slices.Equal(bodies, want) {
		t.Errorf("exported %q, want %q (the records at warn and above)", bodies, want)
	}
}
