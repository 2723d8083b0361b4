// Package telemetry exports a run as OpenTelemetry traces, metrics and
// logs through the official Go SDK, configured by the standard OTEL_*
// environment variables: OTLP over HTTP or gRPC, or the console.
// Nothing starts unless a variable asks for a signal: Setup returns nil,
// and every method of a nil *Telemetry does nothing.
//
// Spans follow the GenAI semantic conventions (semconv v1.40.0) and are
// derived from the run's event stream (Sink); docs/observability.md lists
// them with their attributes.
//
// Imports: runner/event and the OpenTelemetry SDK.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of every span, metric and log.
const scope = "github.com/seed43ef5acb/runner"

// Telemetry holds the providers Setup started. A nil *Telemetry is valid
// and does nothing.
type Telemetry struct {
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider
	lp      *sdklog.LoggerProvider
	tracer  trace.Tracer
	inst    instruments
	parent  context.Context // carries TRACEPARENT's span context
	version string
	// batch is the open span of a batch (StartBatch): each run's span
	// is linked from it.
	batch atomic.Pointer[trace.Span]
	// content exports model text and tool arguments and results
	// (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true), as the
	// event log has them: redacted.
	content bool
}

// maxContent bounds one exported text (model text, tool arguments or
// result), in bytes.
const maxContent = 8 << 10

// StartBatch opens the span of a batch named name ("batch {name}"): the
// spans of the runs started until end is called are linked from it. end
// records the batch's status ("" when it succeeded) and ends the span.
func (t *Telemetry) StartBatch(name string) (end func(failure string)) {
	if t == nil || t.tracer == nil {
		return func(string) {}
	}
	_, sp := t.tracer.Start(t.parent, "batch "+name, trace.WithAttributes(attrBatch.String(name)))
	t.batch.Store(&sp)
	return func(failure string) {
		t.batch.Store(nil)
		if failure != "" {
			sp.SetStatus(codes.Error, failure)
		}
		sp.End()
	}
}

// Signals says which signals the environment asks for: a signal is on when
// OTEL_<SIGNAL>_EXPORTER names an exporter other than none, or, with that
// variable unset, when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT is set. OTEL_SDK_DISABLED=true turns
// all off.
func Signals(getenv func(string) string) (traces, metrics, logs bool) {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false, false, false
	}
	on := func(sig string) bool {
		if e := getenv("OTEL_" + sig + "_EXPORTER"); e != "" {
			return !strings.EqualFold(e, "none")
		}
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_"+sig+"_ENDPOINT") != ""
	}
	return on("TRACES"), on("METRICS"), on("LOGS")
}

// Setup starts the providers of the signals the environment asks for
// (Signals); nil when it asks for none. The SDK's exporters read the
// other standard variables (endpoint, headers, interval) from the process
// environment, so getenv must agree with it. getenv also gives
// TRACEPARENT (and TRACESTATE), which parents the run's spans.
// version is the runner's, for service.version.
func Setup(ctx context.Context, getenv func(string) string, version string) (*Telemetry, error) {
	traces, metrics, logs := Signals(getenv)
	if !traces && !metrics && !logs {
		return nil, nil //nolint:nilnil // nil is the telemetry that does nothing
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName(firstNonEmpty(getenv("OTEL_SERVICE_NAME"), "runner")), semconv.ServiceVersion(version)))
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	if env, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, env); err == nil {
			res = merged
		}
	}
	t := &Telemetry{version: version, parent: parentContext(getenv),
		content: strings.EqualFold(getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"), "true")}
	if err := t.start(ctx, getenv, res, traces, metrics, logs); err != nil {
		_ = t.Shutdown(context.WithoutCancel(ctx))
		return nil, err
	}
	return t, nil
}

func (t *Telemetry) start(ctx context.Context, getenv func(string) string, res *resource.Resource, traces, metrics, logs bool) error {
	if traces {
		exp, err := spanExporter(ctx, getenv)
		if err != nil {
			return fmt.Errorf("telemetry: traces exporter: %w", err)
		}
		if exp != nil {
			t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
			t.tracer = t.tp.Tracer(scope, trace.WithInstrumentationVersion(t.version))
		}
	}
	var meter metric.Meter
	if metrics {
		reader, err := metricReader(ctx, getenv)
		if err != nil {
			return fmt.Errorf("telemetry: metrics exporter: %w", err)
		}
		if reader != nil {
			t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res))
			meter = t.mp.Meter(scope, metric.WithInstrumentationVersion(t.version))
		}
	}
	t.inst = newInstruments(meter)
	if logs {
		exp, err := logExporter(ctx, getenv)
		if err != nil {
			return fmt.Errorf("telemetry: logs exporter: %w", err)
		}
		if exp != nil {
			t.lp = sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)), sdklog.WithResource(res))
		}
	}
	return nil
}

// parentContext is a context carrying TRACEPARENT's span context (W3C
// trace context, as CI systems set it), else the background.
func parentContext(getenv func(string) string) context.Context {
	carrier := propagation.MapCarrier{}
	if v := getenv("TRACEPARENT"); v != "" {
		carrier["traceparent"] = v
	}
	if v := getenv("TRACESTATE"); v != "" {
		carrier["tracestate"] = v
	}
	return propagation.TraceContext{}.Extract(context.Background(), carrier)
}

// LogHandler is the slog handler that sends records to the OTel logs
// exporter; nil when logs are not exported.
func (t *Telemetry) LogHandler() slog.Handler {
	if t == nil || t.lp == nil {
		return nil
	}
	return otelslog.NewHandler(scope, otelslog.WithLoggerProvider(t.lp), otelslog.WithVersion(t.version))
}

// Shutdown flushes and stops every provider; later spans, metrics and logs
// are dropped.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	if t.lp != nil {
		errs = append(errs, t.lp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
