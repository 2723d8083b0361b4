package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/seed43ef5acb/runner/internal/telemetry"
	"github.com/seed43ef5acb/runner/pipeline"
)

// newLogger is the diagnostic log on w (stderr, redacted) at level
// (debug, info, warn, error) in format (text, json): retries, recovered
// panics, a failed event sink. The flags' enums have checked both.
func newLogger(level, format string, w io.Writer) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// startTelemetry starts the OpenTelemetry exporters the OTEL_* variables
// ask for (nil when none) and adds the logs exporter to log. A bad
// exporter setting is logged and the run goes on without telemetry.
func startTelemetry(ctx context.Context, env Environ, log *slog.Logger) (*telemetry.Telemetry, *slog.Logger, func()) {
	t, err := telemetry.Setup(ctx, env.Get, pipeline.Version())
	if err != nil {
		log.Warn("telemetry is off", "error", err)
		return nil, log, func() {}
	}
	if t == nil {
		return nil, log, func() {}
	}
	if h := t.LogHandler(); h != nil {
		log = slog.New(slog.NewMultiHandler(log.Handler(), h))
	}
	return t, log, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := t.Shutdown(sctx); err != nil {
			log.Warn("telemetry: export at exit failed", "error", err)
		}
	}
}

// runnerHTTPClient sends GitHub requests with User-Agent runner/<version>.
func runnerHTTPClient() *http.Client {
	return &http.Client{Transport: telemetry.Transport(nil, pipeline.Version(), nil)}
}
