package llm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/seed43ef5acb/runner/internal/httpguard"
)

// nativeWire is one provider API besides Chat Completions (Anthropic
// Messages, OpenAI Responses): what its request looks like and how its
// stream is read. The provider owns the HTTP call, the idle timeout and
// error classification; the wire owns the bytes.
type nativeWire interface {
	// path is appended to the base URL ("/messages", "/responses"); Bedrock
	// and Vertex name the model in it.
	path(model string) string
	// header sets the wire's authentication and version headers.
	header(h http.Header, apiKey string)
	// body encodes a request; an error wraps ErrBadRequest.
	body(req Request) ([]byte, error)
	// decoder reads one response's events into a.
	decoder(a *assembler) streamDecoder
	// baseVar is the environment variable that sets the base URL, named
	// in the hint of an unreachable endpoint.
	baseVar() string
}

// framer is a wire whose stream is not SSE (Bedrock's event stream): it
// turns a response body into SSE for the shared reader.
type framer interface {
	frame(resp *http.Response) io.ReadCloser
}

// Authorizer authorises a native request once its body and headers are
// set: Bedrock's SigV4 signature, Vertex's OAuth bearer token. It may
// block to fetch or refresh credentials.
type Authorizer interface {
	Authorize(req *http.Request, body []byte) error
}

// streamDecoder turns one response's SSE data payloads into unified events.
type streamDecoder interface {
	// payload handles one data payload; false once the stream is over.
	payload(raw []byte) bool
	// end is called when the body ended without a terminal event.
	end()
}

// NativeProvider streams one native wire (Anthropic Messages, OpenAI
// Responses) with its own HTTP client. It is safe for concurrent use.
type NativeProvider struct {
	wire    nativeWire
	client  *http.Client
	baseURL string
	apiKey  string
	headers map[string]string
	auth    Authorizer // nil: the wire's key header
	idle    time.Duration
	now     func() time.Time
	// versionBase is the base URL a 404 is checked against (versionHint):
	// the responses wire's; "" for the anthropic wire, which adds /v1.
	versionBase string
}

func newNative(w nativeWire, cfg Config, defaultBase string) (*NativeProvider, error) {
	base := cfg.BaseURL
	if base == "" {
		base = defaultBase
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("%w: base URL %q must start with http:// or https://", ErrConfig, base)
	}
	// The key is never sent after a redirect to another origin.
	hc := httpguard.Client(cfg.HTTPClient)
	idle := cfg.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	return &NativeProvider{
		wire: w, client: hc, baseURL: strings.TrimRight(base, "/"), apiKey: cfg.APIKey,
		headers: maps.Clone(cfg.Headers), auth: cfg.Authorizer, idle: idle, now: time.Now,
	}, nil
}

// Stream makes one streamed call and yields its unified events, with the
// contract of Provider.Stream.
func (p *NativeProvider) Stream(ctx context.Context, req Request) iter.Seq[Event] {
	return streamCall(ctx, p.idle, req, p.stream)
}

func (p *NativeProvider) stream(c *call, req Request) {
	ctx, parent, a := c.ctx, c.parent, c.a
	body, err := p.wire.body(req)
	if err != nil {
		a.fail(&Error{Class: ClassFatal, Message: err.Error(), Err: err})
		return
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.baseURL+p.wire.path(req.Model), bytes.NewReader(body))
	if err != nil {
		a.fail(&Error{Class: ClassFatal, Message: err.Error(), Err: fmt.Errorf("%w: %w", ErrConfig, err)})
		return
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	p.wire.header(hreq.Header, p.apiKey)
	for k, v := range p.headers {
		hreq.Header.Set(k, v)
	}
	if p.auth != nil {
		if err := p.auth.Authorize(hreq, body); err != nil {
			// A credential fetch may fail for a moment (a token endpoint, STS).
			a.fail(&Error{Class: ClassRetryable, Message: "authorize the request: " + err.Error(), Err: err})
			return
		}
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		a.fail(transportError(ctx, parent, err, p.wire.baseVar()))
		return
	}
	defer resp.Body.Close()
	c.activity()
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusBadRequest {
		a.fail(p.statusError(resp))
		return
	}
	p.read(ctx, parent, resp, p.wire.decoder(a), a, c.activity)
}

// statusError classifies an HTTP error response from its status, headers
// and body.
func (p *NativeProvider) statusError(resp *http.Response) *Error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	b := parseErrorBody(raw)
	if b.Message == "" {
		b.Message = http.StatusText(resp.StatusCode)
	}
	if b.Type == "" {
		b.Type = amazonErrorType(resp.Header, raw)
	}
	e := classify(errorFacts{
		Status: resp.StatusCode, Code: b.Code, Type: b.Type, Message: b.Message,
		Header: resp.Header, Now: p.now(), RetryDelay: b.RetryDelay, QuotaPeriod: b.QuotaPeriod, BodyHeader: b.Header,
	})
	e.Request, e.Hint = requestLine(resp.Request), versionHint(resp.StatusCode, p.versionBase)
	return e
}

// read feeds the body's data payloads to the decoder: the SSE framing is
// sseReader's (comments, multi-line data, CR line ends, "event: error").
func (p *NativeProvider) read(ctx, parent context.Context, resp *http.Response, d streamDecoder, a *assembler, activity func()) {
	var facts streamFacts
	body := resp.Body
	if f, ok := p.wire.(framer); ok {
		body = f.frame(resp)
	}
	if isJSON(resp.Header.Get("Content-Type")) {
		body = jsonAsEvent(body)
	}
	br := bufio.NewReaderSize(newSSEReader(body, &facts, activity), 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if payload, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data: ")); ok && !isDone(payload) {
			if !d.payload(payload) {
				return
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF) && facts.Events == 0:
			a.fail(&Error{Class: ClassRetryable, Err: ErrIncompleteStream, Message: fmt.Sprintf(
				"incomplete stream: the response (HTTP %d, Content-Type %q) carried no data events",
				resp.StatusCode, resp.Header.Get("Content-Type"))})
			return
		case errors.Is(err, io.EOF):
			d.end()
			return
		default:
			a.fail(transportError(ctx, parent, err, p.wire.baseVar()))
			return
		}
	}
}

// finishGrace bounds the wait for what may follow a reply's end (a usage
// chunk, [DONE], message_stop) once the reply says it is finished.
const finishGrace = 5 * time.Second

// call is one streamed model call of any wire: its context, cancelled
// with ErrIdleTimeout when no bytes or events come for idle (time in the
// consumer, which may run a tool per event, is not idle), and its
// assembler.
//
// Once the reply is finished (finishing), the rest must come within
// finishGrace: bytes no longer restart the timer, so a server that keeps
// the connection open with heartbeats after the end cannot hold the step
// (maximhq/bifrost#6784, diegosouzapw/OmniRoute#6777).
type call struct {
	ctx, parent context.Context
	a           *assembler
	timer       *time.Timer
	idle        time.Duration
	finished    bool // the reply said it is finished
}

// activity restarts the idle timer: bytes arrived.
func (c *call) activity() {
	if !c.finished {
		c.timer.Reset(c.idle)
	}
}

// finishing starts the grace for what follows the reply's end.
func (c *call) finishing() {
	if !c.finished {
		c.finished = true
		c.timer.Reset(min(c.idle, finishGrace))
	}
}

// streamCall is the Stream of every wire: start, then run's events; the
// call's context and timer end with it.
func streamCall(parent context.Context, idle time.Duration, req Request, run func(*call, Request)) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		if !yield(Event{Type: EventStart}) {
			return
		}
		ctx, cancel := context.WithCancelCause(parent)
		defer cancel(nil)
		c := &call{ctx: ctx, parent: parent, idle: idle}
		c.timer = time.AfterFunc(idle, func() { cancel(ErrIdleTimeout) })
		defer c.timer.Stop()
		c.a = newAssembler(req.Tools, func(ev Event) bool {
			c.timer.Stop()
			defer c.timer.Reset(idle)
			return yield(ev)
		})
		c.a.onFinish = c.finishing
		run(c, req)
	}
}

// uniqueCallID is the event id of a native wire's tool call: the id sent
// when it is non-empty and unused in this response, else a generated one
// (call_<n>), as the chat wire names calls.
func (a *assembler) uniqueCallID(sent string) string {
	c := &callAcc{wireID: sent}
	c.ensureID(a.callIDs)
	return c.eventID
}
