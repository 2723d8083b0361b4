package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutlog"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Exporter names OTEL_<SIGNAL>_EXPORTER may hold, and OTLP protocols
// OTEL_EXPORTER_OTLP_[<SIGNAL>_]PROTOCOL may hold.
const (
	exporterOTLP    = "otlp"
	exporterConsole = "console"
	exporterNone    = "none"
	protoHTTP       = "http/protobuf"
	protoGRPC       = "grpc"
)

// exporterFor is the exporter OTEL_<SIGNAL>_EXPORTER names (otlp when
// unset) and, for otlp, the protocol, checked against what the runner
// supports. It is what autoexport does, without its Prometheus reader.
func exporterFor(getenv func(string) string, sig string) (name, proto string, err error) {
	key := "OTEL_" + sig + "_EXPORTER"
	name = strings.ToLower(strings.TrimSpace(getenv(key)))
	switch name {
	case "":
		name = exporterOTLP
	case exporterOTLP, exporterConsole, exporterNone:
	default:
		return "", "", fmt.Errorf("%s=%q: supported values are otlp, console and none", key, getenv(key))
	}
	if name != exporterOTLP {
		return name, "", nil
	}
	pkey := "OTEL_EXPORTER_OTLP_" + sig + "_PROTOCOL"
	proto = getenv(pkey)
	if proto == "" {
		pkey = "OTEL_EXPORTER_OTLP_PROTOCOL"
		proto = getenv(pkey)
	}
	switch proto {
	case "":
		proto = protoHTTP
	case protoHTTP, protoGRPC:
	default:
		return "", "", fmt.Errorf("%s=%q: supported values are http/protobuf and grpc", pkey, proto)
	}
	return name, proto, nil
}

// spanExporter is the traces exporter the environment names; nil for none.
// The OTLP exporters read their endpoint, headers, timeout, compression
// and certificates from the standard variables themselves.
func spanExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	name, proto, err := exporterFor(getenv, "TRACES")
	switch {
	case err != nil || name == exporterNone:
		return nil, err
	case name == exporterConsole:
		return stdouttrace.New()
	case proto == protoGRPC:
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}

// metricReader is the periodic reader of the metrics exporter the
// environment names (its interval from OTEL_METRIC_EXPORT_INTERVAL); nil
// for none.
func metricReader(ctx context.Context, getenv func(string) string) (sdkmetric.Reader, error) {
	name, proto, err := exporterFor(getenv, "METRICS")
	var exp sdkmetric.Exporter
	switch {
	case err != nil || name == exporterNone:
		return nil, err
	case name == exporterConsole:
		exp, err = stdoutmetric.New()
	case proto == protoGRPC:
		exp, err = otlpmetricgrpc.New(ctx)
	default:
		exp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, err
	}
	return sdkmetric.NewPeriodicReader(exp), nil
}

// logExporter is the logs exporter the environment names; nil for none.
func logExporter(ctx context.Context, getenv func(string) string) (sdklog.Exporter, error) {
	name, proto, err := exporterFor(getenv, "LOGS")
	switch {
	case err != nil || name == exporterNone:
		return nil, err
	case name == exporterConsole:
		return stdoutlog.New()
	case proto == protoGRPC:
		return otlploggrpc.New(ctx)
	}
	return otlploghttp.New(ctx)
}
