package telemetry

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Transport wraps base so that every request carries `User-Agent:
// runner/<version>` and, when run's telemetry exports traces, a W3C
// traceparent naming the span the request belongs to (the run's open chat
// span during a model call, else its root span), so a gateway's logs tie
// to the run. run may be nil.
func Transport(base http.RoundTripper, version string, run *Run) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, ua: "runner/" + version, run: run}
}

type transport struct {
	base http.RoundTripper
	ua   string
	run  *Run
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper must not change the caller's request
	req.Header.Set("User-Agent", tr.ua)
	tr.run.inject(req)
	return tr.base.RoundTrip(req)
}

// inject writes traceparent (and tracestate) for the current span.
func (r *Run) inject(req *http.Request) {
	if r == nil || r.t.tp == nil {
		return
	}
	ctx := req.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() {
		sc := r.current.Load()
		if sc == nil {
			return
		}
		ctx = trace.ContextWithSpanContext(ctx, *sc)
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
}
