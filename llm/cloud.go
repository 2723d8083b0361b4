package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// Platform is where the anthropic wire reaches Claude.
type Platform string

// Platforms.
const (
	// PlatformAnthropic is Anthropic's own API (api.anthropic.com).
	PlatformAnthropic Platform = ""
	// PlatformBedrock is Amazon Bedrock's InvokeModelWithResponseStream.
	PlatformBedrock Platform = "bedrock"
	// PlatformVertex is Google Vertex AI's streamRawPredict.
	PlatformVertex Platform = "vertex"
)

// PlatformNames lists the platforms a spec may name.
func PlatformNames() []string {
	return []string{"anthropic", string(PlatformBedrock), string(PlatformVertex)}
}

// Body versions of the cloud platforms, which take anthropic_version in the
// body instead of the header (platform.claude.com, "Claude on Amazon
// Bedrock", "Claude on Vertex AI").
const (
	BedrockAnthropicVersion = "bedrock-2023-05-31"
	VertexAnthropicVersion  = "vertex-2023-10-16"
)

// Cloud says where Claude runs on a cloud platform.
type Cloud struct {
	Platform Platform
	// Region is the AWS region (us-east-1) or the Vertex location
	// (us-east5, europe-west1, global).
	Region string
	// Project is the Google Cloud project (Vertex only).
	Project string
}

// BaseURL is the platform's endpoint for the region: Bedrock's runtime
// host, or Vertex's /v1 root ("global" has no region prefix).
func (c Cloud) BaseURL() string {
	switch c.Platform {
	case PlatformBedrock:
		return "https://bedrock-runtime." + c.Region + ".amazonaws.com"
	case PlatformVertex:
		if c.Region == "global" {
			return "https://aiplatform.googleapis.com/v1"
		}
		return "https://" + c.Region + "-aiplatform.googleapis.com/v1"
	}
	return DefaultAnthropicURL
}

// newCloud returns the anthropic wire on Bedrock or Vertex at cfg.BaseURL
// (Cloud.BaseURL when empty), authorised by cfg.Authorizer.
func newCloud(cfg Config) (*NativeProvider, error) {
	c := *cfg.Cloud
	if c.Region == "" {
		return nil, fmt.Errorf("%w: %s needs a region (provider.region in the spec)", ErrConfig, c.Platform)
	}
	switch c.Platform {
	case PlatformBedrock:
		return newNative(bedrockWire{}, cfg, c.BaseURL())
	case PlatformVertex:
		if c.Project == "" {
			return nil, fmt.Errorf("%w: vertex needs a Google Cloud project (provider.project in the spec)", ErrConfig)
		}
		return newNative(vertexWire{cloud: c}, cfg, c.BaseURL())
	}
	return nil, fmt.Errorf("%w: unknown platform %q (one of %s)", ErrConfig, c.Platform, strings.Join(PlatformNames(), ", "))
}

// bedrockWire is the Messages API on Amazon Bedrock: POST
// /model/{id}/invoke-with-response-stream, the body without model and
// stream, the stream in AWS event-stream framing (docs.aws.amazon.com,
// "Anthropic Claude Messages API", "InvokeModelWithResponseStream").
type bedrockWire struct{ anthropicWire }

func (bedrockWire) baseVar() string { return "ANTHROPIC_BEDROCK_BASE_URL" }

func (bedrockWire) path(model string) string {
	return "/model/" + url.PathEscape(model) + "/invoke-with-response-stream"
}

// header sets the accepted framing; the Authorizer signs.
func (bedrockWire) header(h http.Header, _ string) {
	h.Set("Accept", eventStreamType)
}

func (bedrockWire) body(req Request) ([]byte, error) {
	out, err := anthropicRequest(req)
	if err != nil {
		return nil, err
	}
	out.AnthropicVersion, out.Model, out.Stream = BedrockAnthropicVersion, "", false
	return json.Marshal(out)
}

// eventStreamType is the Content-Type of AWS event-stream bodies.
const eventStreamType = "application/vnd.amazon.eventstream"

func (bedrockWire) frame(resp *http.Response) io.ReadCloser {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != eventStreamType {
		return resp.Body // an error body, or a proxy that speaks SSE
	}
	return &eventStreamSSE{rc: resp.Body, dec: eventstream.NewDecoder()}
}

// eventStreamSSE reads AWS event-stream messages and writes them as SSE:
// a chunk's base64 bytes are a Messages stream event; an exception becomes
// an Anthropic error event of the matching type.
type eventStreamSSE struct {
	rc  io.ReadCloser
	dec *eventstream.Decoder
	buf bytes.Buffer
	err error
}

func (e *eventStreamSSE) Read(p []byte) (int, error) {
	for e.buf.Len() == 0 {
		if e.err != nil {
			return 0, e.err
		}
		msg, err := e.dec.Decode(e.rc, nil)
		if err != nil {
			e.err = err
			if err == io.EOF || strings.Contains(err.Error(), "EOF") {
				e.err = io.EOF // a cut between messages is judged by the decoder
			}
			continue
		}
		e.translate(msg)
	}
	return e.buf.Read(p)
}

func (e *eventStreamSSE) Close() error { return e.rc.Close() }

func (e *eventStreamSSE) translate(msg eventstream.Message) {
	header := func(name string) string {
		if v := msg.Headers.Get(name); v != nil {
			return v.String()
		}
		return ""
	}
	switch header(":message-type") {
	case "event":
		if header(":event-type") != "chunk" {
			return
		}
		var chunk struct {
			Bytes string `json:"bytes"`
		}
		if json.Unmarshal(msg.Payload, &chunk) != nil {
			return
		}
		data, err := base64.StdEncoding.DecodeString(chunk.Bytes)
		if err != nil {
			return
		}
		e.emit(data)
	case "exception":
		var body struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(msg.Payload, &body)
		typ, status := bedrockErrorType(header(":exception-type"))
		if typ == "" {
			typ = "api_error"
		}
		e.emitError(typ, status, header(":exception-type")+": "+body.Message)
	case "error":
		e.emitError("api_error", "", header(":error-code")+": "+header(":error-message"))
	}
}

// bedrockErrorType maps a Bedrock exception to the Anthropic error type and
// the HTTP status Bedrock gives it (InvokeModelWithResponseStream's
// errors), which the classifier judges: throttling waits, service trouble
// is retried, a validation error is fatal or, by its message, compacts.
// An exception it does not know is "", "".
func bedrockErrorType(exception string) (typ, status string) {
	switch strings.ToLower(exception) {
	case "throttlingexception", "toomanyrequestsexception":
		return "rate_limit_error", "429"
	case "internalserverexception":
		return "api_error", "500"
	case "serviceunavailableexception", "modelnotreadyexception":
		return "overloaded_error", "503"
	case "modelstreamerrorexception":
		return "api_error", "424"
	case "modeltimeoutexception":
		return "api_error", "408"
	case "validationexception":
		return "invalid_request_error", "400"
	}
	return "", ""
}

// amazonErrorType is the error type of an AWS error response: its
// x-amzn-ErrorType header ("ThrottlingException:http://internal…"), else
// the body's __type, mapped by bedrockErrorType; "" when neither names a
// known exception. Bedrock sends throttling with HTTP 400 too
// (anthropics/anthropic-sdk-python#1289), so the name decides.
func amazonErrorType(h http.Header, body []byte) string {
	name := h.Get("x-amzn-ErrorType")
	if name == "" {
		var b struct {
			Type string `json:"__type"`
		}
		_ = json.Unmarshal(body, &b)
		name = b.Type
	}
	name, _, _ = strings.Cut(name, ":")
	name = name[strings.LastIndexByte(name, '#')+1:] // "com.amazon…#ThrottlingException"
	typ, _ := bedrockErrorType(strings.TrimSpace(name))
	return typ
}

func (e *eventStreamSSE) emit(data []byte) {
	e.buf.WriteString("data: ")
	e.buf.Write(bytes.ReplaceAll(data, []byte("\n"), nil))
	e.buf.WriteString("\n\n")
}

func (e *eventStreamSSE) emitError(typ, status, message string) {
	data, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "code": status, "message": message}})
	e.emit(data)
}

// vertexWire is the Messages API on Google Vertex AI: POST
// /projects/{p}/locations/{r}/publishers/anthropic/models/{m}:streamRawPredict,
// the body without model, the stream in SSE as Anthropic's
// (cloud.google.com, "Use Anthropic's Claude models").
type vertexWire struct {
	anthropicWire
	cloud Cloud
}

func (vertexWire) baseVar() string { return "ANTHROPIC_VERTEX_BASE_URL" }

func (w vertexWire) path(model string) string {
	return "/projects/" + url.PathEscape(w.cloud.Project) + "/locations/" + url.PathEscape(w.cloud.Region) +
		"/publishers/anthropic/models/" + url.PathEscape(model) + ":streamRawPredict"
}

// header sets nothing: the version is in the body, the Authorizer sets the
// bearer token.
func (vertexWire) header(http.Header, string) {}

func (vertexWire) body(req Request) ([]byte, error) {
	out, err := anthropicRequest(req)
	if err != nil {
		return nil, err
	}
	out.AnthropicVersion, out.Model = VertexAnthropicVersion, ""
	return json.Marshal(out)
}
