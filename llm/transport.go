package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
)

// maxErrorBody bounds how much of an error body is kept.
const maxErrorBody = 1 << 20

// callState carries one call's facts between Stream and the transport
// adaptor, through the request context: what to add to the body, and what
// the response said (status, headers, error body, SSE framing facts).
type callState struct {
	patch    map[string]json.RawMessage // body members set before sending
	activity func()                     // called when bytes arrive

	request string // "METHOD URL" of the call (requestLine)
	status  int
	header  http.Header
	errBody []byte
	facts   streamFacts
}

type callStateKey struct{}

func withCallState(ctx context.Context, st *callState) context.Context {
	return context.WithValue(ctx, callStateKey{}, st)
}

// doer is the go-openai ClientConfig.HTTPClient: a thin adaptor around the
// configured *http.Client (whose RoundTripper may be a cassette). It adds
// the configured headers and the body members go-openai's types cannot
// carry, keeps status and headers (go-openai's errors drop them, so
// Retry-After would be lost), and re-frames successful SSE bodies
// (sseReader).
type doer struct {
	client  *http.Client
	headers map[string]string
}

// Do implements openai.HTTPDoer.
func (d *doer) Do(req *http.Request) (*http.Response, error) {
	for k, v := range d.headers {
		req.Header.Set(k, v)
	}
	st, _ := req.Context().Value(callStateKey{}).(*callState)
	if st != nil && len(st.patch) > 0 {
		if err := patchBody(req, st.patch); err != nil {
			return nil, err
		}
	}
	if st != nil {
		st.request = requestLine(req)
	}
	resp, err := d.client.Do(req)
	if err != nil || st == nil {
		return resp, err
	}
	if st.activity != nil {
		st.activity()
	}
	st.status, st.header = resp.StatusCode, resp.Header.Clone()
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusBadRequest {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
		st.errBody = body
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	if isJSON(resp.Header.Get("Content-Type")) {
		resp.Body = jsonAsEvent(resp.Body)
	}
	resp.Body = newSSEReader(resp.Body, &st.facts, st.activity)
	return resp, nil
}

// patchBody sets members of the JSON request body.
func patchBody(req *http.Request, patch map[string]json.RawMessage) error {
	if req.Body == nil {
		return fmt.Errorf("%w: request has no body to extend", ErrBadRequest)
	}
	raw, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return fmt.Errorf("read request body: %w", err)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		return fmt.Errorf("decode request body: %w", err)
	}
	maps.Copy(body, patch)
	out, err := encodeObject(body)
	if err != nil {
		return fmt.Errorf("encode request body: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(out))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	req.ContentLength = int64(len(out))
	return nil
}

// encodeObject is json.Marshal(members) without compacting each value
// again (json.Marshal re-validates every RawMessage byte by byte, and the
// messages member holds the whole conversation): the values come from
// json.Marshal or json.Unmarshal, valid and compact already. Members are
// in sorted order, as json.Marshal writes a map.
func encodeObject(members map[string]json.RawMessage) ([]byte, error) {
	n := 2
	for k, v := range members {
		n += len(k) + len(v) + 4
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	for i, k := range slices.Sorted(maps.Keys(members)) {
		if i > 0 {
			out = append(out, ',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		v := members[k]
		if len(v) == 0 {
			v = json.RawMessage("null") // as json.Marshal writes a nil RawMessage
		}
		out = append(append(append(out, key...), ':'), v...)
	}
	return append(out, '}'), nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// jsonAsEvent turns a plain JSON body (a server that ignored stream: true,
// or a 200 carrying an error) into one SSE data event. A body that is not
// one JSON value (SSE sent with a JSON content type) passes unchanged.
func jsonAsEvent(body io.ReadCloser) io.ReadCloser {
	raw, err := io.ReadAll(body)
	_ = body.Close()
	var buf bytes.Buffer
	buf.WriteString("data: ")
	if json.Compact(&buf, bytes.TrimSpace(raw)) == nil {
		buf.WriteString("\n\n")
		raw = buf.Bytes()
	}
	return &errAfterReader{r: bytes.NewReader(raw), err: err}
}

// errAfterReader returns err (when set) instead of io.EOF at the end.
type errAfterReader struct {
	r   io.Reader
	err error
}

func (e *errAfterReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF && e.err != nil {
		return n, e.err
	}
	return n, err
}

func (e *errAfterReader) Close() error { return nil }
