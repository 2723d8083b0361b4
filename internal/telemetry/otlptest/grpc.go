package otlptest

import (
	"context"
	"net"
	"testing"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// StartGRPC runs an OTLP/gRPC receiver until the test ends. Its URL
// (http://127.0.0.1:PORT) makes the gRPC exporters connect without TLS.
func StartGRPC(t testing.TB) *Receiver {
	t.Helper()
	lis, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{URL: "http://" + lis.Addr().String()}
	srv := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(srv, traceService{r: r})
	colmetrics.RegisterMetricsServiceServer(srv, metricsService{r: r})
	collogs.RegisterLogsServiceServer(srv, logsService{r: r})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return r
}

type traceService struct {
	coltrace.UnimplementedTraceServiceServer
	r *Receiver
}

func (s traceService) Export(_ context.Context, m *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	s.r.addTraces(m)
	return &coltrace.ExportTraceServiceResponse{}, nil
}

type metricsService struct {
	colmetrics.UnimplementedMetricsServiceServer
	r *Receiver
}

func (s metricsService) Export(_ context.Context, m *colmetrics.ExportMetricsServiceRequest) (*colmetrics.ExportMetricsServiceResponse, error) {
	s.r.addMetrics(m)
	return &colmetrics.ExportMetricsServiceResponse{}, nil
}

type logsService struct {
	collogs.UnimplementedLogsServiceServer
	r *Receiver
}

func (s logsService) Export(_ context.Context, m *collogs.ExportLogsServiceRequest) (*collogs.ExportLogsServiceResponse, error) {
	s.r.addLogs(m)
	return &collogs.ExportLogsServiceResponse{}, nil
}
