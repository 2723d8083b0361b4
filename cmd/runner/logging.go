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
// ask for (nil when none) and adds the logs exporter to log, at log's
// level. A bad exporter setting is logged and the run goes on without
// telemetry.
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
		log = slog.New(slog.NewMultiHandler(log.Handler(), gated{h: h, gate: log.Handler()}))
	}
	return t, log, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := t.Shutdown(sctx); err != nil {
			log.Warn("telemetry: export at exit failed", "error", err)
		}
	}
}

// gated is h taking only the records gate is enabled for: the OTel logs
// get the --log-level of stderr.
type gated struct {
	h, gate slog.Handler
}

func (g gated) Enabled(ctx context.Context, l slog.Level) bool {
	return g.gate.Enabled(ctx, l) && g.h.Enabled(ctx, l)
}

func (g gated) Handle(ctx context.Context, r slog.Record) error { return g.h.Handle(ctx, r) }

func (g gated) WithAttrs(as []slog.Attr) slog.Handler {
	return gated{h: g.h.WithAttrs(as), gate: g.gate.WithAttrs(as)}
}

func (g gated) WithGroup(name string) slog.Handler {
	return gated{h: g.h.WithGroup(name), gate: g.gate.WithGroup(name)}
}

// runnerHTTPClient sends GitHub requests with User-Agent runner/<version>.
func runnerHTTPClient() *http.Client {
	return &http.Client{Transport: telemetry.Transport(nil, pipeline.Version(), nil)}
}
