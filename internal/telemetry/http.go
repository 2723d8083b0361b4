package telemetry

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Transport wraps base so that every request carries `User-Agent:
// runner/<version>` and, when t exports traces, a W3C traceparent naming
// the span the request belongs to (the open chat span of a model call,
// else the run's root span), so a gateway's logs tie to the run.
func Transport(base http.RoundTripper, version string, t *Telemetry) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, ua: "runner/" + version, t: t}
}

type transport struct {
	base http.RoundTripper
	ua   string
	t    *Telemetry
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper must not change the caller's request
	req.Header.Set("User-Agent", tr.ua)
	tr.t.inject(req)
	return tr.base.RoundTrip(req)
}

// inject writes traceparent (and tracestate) for the current span.
func (t *Telemetry) inject(req *http.Request) {
	if t == nil || t.tp == nil {
		return
	}
	ctx := req.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() {
		sc := t.current.Load()
		if sc == nil {
			return
		}
		ctx = trace.ContextWithSpanContext(ctx, *sc)
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
}
