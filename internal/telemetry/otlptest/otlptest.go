// Package otlptest is an OTLP receiver for tests, over HTTP (Start) or
// gRPC (StartGRPC): it listens on 127.0.0.1, decodes what the exporters
// send with the OpenTelemetry proto packages, and keeps it for assertions.
//
// Imports: go.opentelemetry.io/proto/otlp, google.golang.org/grpc and the
// standard library.
package otlptest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver is a running OTLP/HTTP receiver.
type Receiver struct {
	URL string // http://127.0.0.1:PORT, for OTEL_EXPORTER_OTLP_ENDPOINT

	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []*metricspb.Metric
	logs    []*logspb.LogRecord
	errs    []error
}

// Start runs a receiver until the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, err := range r.errs {
			t.Errorf("otlptest: %v", err)
		}
	})
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := readBody(req)
	if err != nil {
		r.fail(w, err)
		return
	}
	switch req.URL.Path {
	case "/v1/traces":
		var m coltrace.ExportTraceServiceRequest
		if r.decode(w, body, &m) {
			r.addTraces(&m)
			writeProto(w, &coltrace.ExportTraceServiceResponse{})
		}
		return
	case "/v1/metrics":
		var m colmetrics.ExportMetricsServiceRequest
		if r.decode(w, body, &m) {
			r.addMetrics(&m)
			writeProto(w, &colmetrics.ExportMetricsServiceResponse{})
		}
		return
	case "/v1/logs":
		var m collogs.ExportLogsServiceRequest
		if r.decode(w, body, &m) {
			r.addLogs(&m)
			writeProto(w, &collogs.ExportLogsServiceResponse{})
		}
		return
	}
	http.Error(w, "not an OTLP path", http.StatusNotFound)
}

// decode unmarshals body into m, or records the error and answers 400.
func (r *Receiver) decode(w http.ResponseWriter, body []byte, m proto.Message) bool {
	if err := proto.Unmarshal(body, m); err != nil {
		r.fail(w, err)
		return false
	}
	return true
}

func (r *Receiver) addTraces(m *coltrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range m.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
}

func (r *Receiver) addMetrics(m *colmetrics.ExportMetricsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range m.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			r.metrics = append(r.metrics, sm.GetMetrics()...)
		}
	}
}

func (r *Receiver) addLogs(m *collogs.ExportLogsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rl := range m.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			r.logs = append(r.logs, sl.GetLogRecords()...)
		}
	}
}

func (r *Receiver) fail(w http.ResponseWriter, err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	http.Error(w, err.Error(), http.StatusBadRequest)
}

func readBody(req *http.Request) ([]byte, error) {
	var rd io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, err
		}
		defer gz.Close()
		rd = gz
	}
	return io.ReadAll(rd)
}

func writeProto(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

// Metrics returns the metrics received so far.
func (r *Receiver) Metrics() []*metricspb.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*metricspb.Metric(nil), r.metrics...)
}

// Logs returns the log records received so far.
func (r *Receiver) Logs() []*logspb.LogRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*logspb.LogRecord(nil), r.logs...)
}

// Attrs maps attribute keys to their values as strings (slices joined
// with ",").
func Attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		out[kv.GetKey()] = valueString(kv.GetValue())
	}
	return out
}

func valueString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return itoa(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	case *commonpb.AnyValue_DoubleValue:
		return ftoa(x.DoubleValue)
	case *commonpb.AnyValue_ArrayValue:
		s := ""
		for i, e := range x.ArrayValue.GetValues() {
			if i > 0 {
				s += ","
			}
			s += valueString(e)
		}
		return s
	}
	return ""
}
