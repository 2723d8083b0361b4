package llm

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Exchange is one recorded HTTP call: one line of a cassette (JSONL).
type Exchange struct {
	Request  RecordedRequest  `json:"request"`
	Response RecordedResponse `json:"response"`
}

// RecordedRequest is a request as recorded, secrets redacted.
type RecordedRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Query   string            `json:"query,omitempty"`
	Headers map[string]string `json:"headers"`
	// Body is the JSON body, or a JSON string holding a non-JSON body.
	Body json.RawMessage `json:"body,omitempty"`
}

// RecordedResponse is a response as received: status, headers and the raw
// body (the SSE transcript or the error body).
type RecordedResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	// BodyHex holds a body that is not UTF-8 (Bedrock's binary event
	// stream), in hex: a JSON string would mangle it, and hex cannot
	// look like a token to the redactor.
	BodyHex string `json:"body_hex,omitempty"`
}

// recordedResponse is a response with its body kept as text or in hex.
func recordedResponse(status int, h http.Header, body []byte) RecordedResponse {
	r := RecordedResponse{Status: status, Headers: headerMap(h)}
	if utf8.Valid(body) {
		r.Body = string(body)
	} else {
		r.BodyHex = hex.EncodeToString(body)
	}
	return r
}

// body returns the response body as received.
func (r RecordedResponse) body() string {
	if r.BodyHex != "" {
		b, _ := hex.DecodeString(r.BodyHex)
		return string(b)
	}
	return r.Body
}

// redacted replaces secret header values in cassettes.
const redacted = "REDACTED"

// NewRecorder returns a RoundTripper that forwards to next (nil:
// http.DefaultTransport) and writes one JSONL line per exchange to w when the
// response body is closed or read to its end. Authorization, api-key and any
// header whose name looks secret are redacted. Safe for concurrent use.
func NewRecorder(w io.Writer, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &recorder{w: w, next: next}
}

type recorder struct {
	mu   sync.Mutex
	w    io.Writer
	next http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("record: read request body: %w", err)
		}
		body = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	rec := RecordedRequest{
		Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery,
		Headers: headerMap(req.Header), Body: bodyJSON(body),
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &teeBody{rc: resp.Body, done: func(b []byte) {
		r.write(Exchange{Request: rec, Response: recordedResponse(resp.StatusCode, resp.Header, b)})
	}}
	return resp, nil
}

func (r *recorder) write(x Exchange) {
	line, err := json.Marshal(x)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.w.Write(append(line, '\n'))
}

// teeBody keeps what was read and reports it once, at EOF or Close.
type teeBody struct {
	rc   io.ReadCloser
	buf  bytes.Buffer
	once sync.Once
	done func([]byte)
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.buf.Write(p[:n])
	if err != nil {
		t.once.Do(func() { t.done(t.buf.Bytes()) })
	}
	return n, err
}

func (t *teeBody) Close() error {
	t.once.Do(func() { t.done(t.buf.Bytes()) })
	return t.rc.Close()
}

func headerMap(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		v := strings.Join(vs, ", ")
		if secretHeader(k) {
			v = redacted
		}
		out[http.CanonicalHeaderKey(k)] = v
	}
	return out
}

// secretHeader reports whether a header's value must not be recorded.
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"authorization", "api-key", "apikey", "token", "secret", "cookie", "password", "session", "credential", "signature"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return strings.HasSuffix(n, "-key") || strings.HasSuffix(n, "_key")
}

func bodyJSON(b []byte) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if json.Compact(&buf, b) == nil {
		return buf.Bytes()
	}
	s, _ := json.Marshal(string(b))
	return s
}

// Cassette is a recorded session, replayed in order.
type Cassette struct {
	Exchanges []Exchange
	// Source is where the cassette was read from (its path), named in
	// the errors of a replay that runs past its end or differs from it.
	Source string
}

// LoadCassette reads a cassette written by NewRecorder.
func LoadCassette(r io.Reader) (*Cassette, error) {
	c := &Cassette{}
	sc := bufio.NewScanner(r)
	// The buffer grows from bufio's 4 KiB to the longest line: a batch
	// loads a cassette per repository, and a 1 MiB buffer each made 3,000
	// repositories' checks allocate 3 GB.
	sc.Buffer(nil, 256<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var x Exchange
		if err := json.Unmarshal(line, &x); err != nil {
			return nil, fmt.Errorf("cassette line %d: %w", n, err)
		}
		c.Exchanges = append(c.Exchanges, x)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read cassette: %w", err)
	}
	return c, nil
}

// RoundTripper answers requests from the cassette, in order, with no
// network. A request beyond the last exchange fails with
// ErrCassetteExhausted; a request whose method, endpoint, model or message
// roles differ from the recorded one fails with ErrCassetteMismatch. Each
// call returns a fresh replay from the first exchange.
func (c *Cassette) RoundTripper() http.RoundTripper {
	return &replayer{exchanges: c.Exchanges, source: c.Source}
}

type replayer struct {
	mu        sync.Mutex
	exchanges []Exchange
	source    string
	next      int
}

// again is how to fix a cassette that does not fit the run: record it
// again, live.
func (r *replayer) again() string {
	file := r.source
	if file == "" {
		file = "FILE"
	}
	return "record the session again: run once live with --record " + file + ", then replay that"
}

// name is "the replayed cassette PATH" for an error message.
func (r *replayer) name() string {
	if r.source == "" {
		return "the replayed cassette"
	}
	return "the replayed cassette " + r.source
}

func (r *replayer) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		_ = req.Body.Close()
	}
	r.mu.Lock()
	n := r.next
	r.next++
	r.mu.Unlock()
	if n >= len(r.exchanges) {
		return nil, fmt.Errorf("%w: %s holds %d model calls and the run made call %d, past its end "+
			"(no endpoint was contacted); %s",
			ErrCassetteExhausted, r.name(), len(r.exchanges), n+1, r.again())
	}
	x := r.exchanges[n]
	if err := matchRequest(x.Request, req, body); err != nil {
		return nil, fmt.Errorf("%w: %s: model call %d differs from the recorded one: %w (no endpoint was contacted); %s",
			ErrCassetteMismatch, r.name(), n+1, err, r.again())
	}
	h := http.Header{}
	for k, v := range x.Response.Headers {
		h.Set(k, v)
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", x.Response.Status, http.StatusText(x.Response.Status)),
		StatusCode:    x.Response.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(strings.NewReader(x.Response.body())),
		ContentLength: int64(len(x.Response.body())),
		Request:       req,
	}, nil
}

// replayKey is what must match between a recorded and a replayed request.
type replayKey struct {
	Model       string
	Roles       []string
	HasMessages bool
}

func keyOf(body []byte) replayKey {
	type entry struct {
		Role string `json:"role"`
		Type string `json:"type"`
	}
	var b struct {
		Model    string   `json:"model"`
		Messages *[]entry `json:"messages"`
		Input    *[]entry `json:"input"` // the Responses API's items
	}
	_ = json.Unmarshal(body, &b)
	list := b.Messages
	if list == nil {
		list = b.Input
	}
	k := replayKey{Model: b.Model, HasMessages: list != nil}
	if list != nil {
		for _, m := range *list {
			k.Roles = append(k.Roles, cmp.Or(m.Role, m.Type))
		}
	}
	return k
}

// matchRequest compares what matters: method, endpoint, model and the roles
// of the messages (the kinds of the input items on the Responses API) (contents may carry paths or times that differ per run).
// The endpoint is the path's last two segments ("chat/completions"), so a
// session recorded against one base URL (OpenRouter's /api/v1, an Azure
// deployment) replays under another. A
// hand-written exchange that leaves out the model or the messages does not
// constrain them.
func matchRequest(rec RecordedRequest, req *http.Request, body []byte) error {
	if rec.Method != req.Method || endpoint(rec.Path) != endpoint(req.URL.Path) {
		return fmt.Errorf("recorded %s %s, got %s %s", rec.Method, rec.Path, req.Method, req.URL.Path)
	}
	want, got := keyOf(rec.Body), keyOf(body)
	if want.Model != "" && want.Model != got.Model {
		return fmt.Errorf("recorded model %q, got %q", want.Model, got.Model)
	}
	if want.HasMessages && !slices.Equal(want.Roles, got.Roles) {
		return fmt.Errorf("recorded %d messages %v, got %d %v", len(want.Roles), want.Roles, len(got.Roles), got.Roles)
	}
	return nil
}

// endpoint returns the last two segments of a URL path.
func endpoint(p string) string {
	p = strings.TrimRight(p, "/")
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return p
	}
	if j := strings.LastIndexByte(p[:i], '/'); j >= 0 {
		return p[j+1:]
	}
	return p
}

// WriteCassette writes exchanges as a cassette (one JSON line each), for
// example a scripted session whose response bodies come from
// llmtest.Turn.SSE.
func WriteCassette(w io.Writer, exchanges ...Exchange) error {
	for i, x := range exchanges {
		line, err := json.Marshal(x)
		if err != nil {
			return fmt.Errorf("cassette exchange %d: %w", i+1, err)
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("write cassette: %w", err)
		}
	}
	return nil
}
