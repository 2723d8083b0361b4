package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/seed43ef5acb/runner/internal/httpguard"
)

// DefaultIdleTimeout is the per-chunk idle timeout when Config leaves it 0.
const DefaultIdleTimeout = 90 * time.Second

// Config configures an OpenAI-compatible provider.
type Config struct {
	// BaseURL is the API root including the version, e.g.
	// "https://api.openai.com/v1" (the default) or "http://localhost:11434/v1".
	BaseURL string
	APIKey  string
	// Headers are added to every request (OpenRouter's HTTP-Referer, …).
	Headers map[string]string
	// Azure, when set, selects Azure OpenAI (api-key header, deployment
	// URLs, api-version query).
	Azure *AzureConfig
	// HTTPClient sends the requests; tests and cassettes put their
	// RoundTripper in its Transport. nil: a plain client with no timeout
	// (streams are bounded by IdleTimeout and the caller's context).
	HTTPClient *http.Client
	// IdleTimeout is the longest wait for the next bytes of a response
	// (headers included); a stall becomes a retryable error wrapping
	// ErrIdleTimeout. 0: DefaultIdleTimeout. SSE comments count as bytes.
	IdleTimeout time.Duration
	// SendReasoningContent sends an assistant message's Reasoning back as
	// reasoning_content (newer DeepSeek thinking models require it; the
	// first deepseek-reasoner rejected it). reasoning_details is always sent
	// back when present.
	SendReasoningContent bool
	// Profile adapts requests to the provider (tool-call ids, message
	// order, empty content, tool schemas, cache breakpoints, store,
	// reasoning effort, sampling). nil: chosen per request from BaseURL and
	// the request's model (ProfileFor); &Profile{} sends requests
	// unadapted.
	Profile *Profile
	// Cloud, on the anthropic wire, reaches Claude on Amazon Bedrock or
	// Google Vertex AI instead of Anthropic's API; nil: Anthropic's.
	Cloud *Cloud
	// Authorizer signs or authorises native requests (Bedrock's SigV4,
	// Vertex's bearer token); nil: the wire's key header with APIKey.
	Authorizer Authorizer
}

// AzureConfig addresses Azure OpenAI.
type AzureConfig struct {
	Endpoint   string // https://NAME.openai.azure.com; BaseURL when empty
	APIVersion string // e.g. "2024-10-21"; go-openai's default when empty
	// Deployments maps model names to deployment names; a model not listed
	// is used as the deployment name.
	Deployments map[string]string
}

// Provider streams Chat Completions from one OpenAI-compatible endpoint
// through github.com/sashabaranov/go-openai. It is safe for concurrent use.
type Provider struct {
	client        *openai.Client
	idle          time.Duration
	now           func() time.Time
	sendReasoning bool
	baseURL       string
	versionBase   string // the base URL a 404 is checked against (versionHint); "" for Azure
	profile       *Profile
	dropped       *droppedMembers // members the endpoint rejected
}

// profileFor is the profile a request for model is sent with.
func (p *Provider) profileFor(model string) Profile {
	if p.profile != nil {
		return *p.profile
	}
	return ProfileFor(p.baseURL, model)
}

// New returns a provider for cfg.
func New(cfg Config) (*Provider, error) {
	// The key is never sent after a redirect to another origin.
	hc := httpguard.Client(cfg.HTTPClient)
	var oc openai.ClientConfig
	if az := cfg.Azure; az != nil {
		endpoint := az.Endpoint
		if endpoint == "" {
			endpoint = cfg.BaseURL
		}
		if endpoint == "" {
			return nil, fmt.Errorf("%w: Azure needs an endpoint", ErrConfig)
		}
		oc = openai.DefaultAzureConfig(cfg.APIKey, endpoint)
		if az.APIVersion != "" {
			oc.APIVersion = az.APIVersion
		}
		deployments := maps.Clone(az.Deployments)
		oc.AzureModelMapperFunc = func(model string) string {
			if d, ok := deployments[model]; ok {
				return d
			}
			return model
		}
	} else {
		oc = openai.DefaultConfig(cfg.APIKey)
		if cfg.BaseURL != "" {
			if !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
				return nil, fmt.Errorf("%w: base URL %q must start with http:// or https://", ErrConfig, cfg.BaseURL)
			}
			oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
		}
	}
	oc.HTTPClient = &doer{client: hc, headers: maps.Clone(cfg.Headers)}
	// The SSE adaptor passes data lines only; stalls are caught by the idle
	// timeout, never by a line budget.
	oc.EmptyMessagesLimit = math.MaxUint32
	idle := cfg.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	versionBase := ""
	if cfg.Azure == nil {
		versionBase = cfg.BaseURL
	}
	return &Provider{
		client: openai.NewClientWithConfig(oc), idle: idle, now: time.Now, versionBase: versionBase,
		sendReasoning: cfg.SendReasoningContent, baseURL: profileURL(cfg), profile: cloneProfile(cfg.Profile),
		dropped: &droppedMembers{},
	}, nil
}

// profileURL is the URL profiles are chosen by: the Azure endpoint, the
// base URL, or OpenAI's default.
func profileURL(cfg Config) string {
	switch {
	case cfg.Azure != nil && cfg.Azure.Endpoint != "":
		return cfg.Azure.Endpoint
	case cfg.BaseURL != "":
		return cfg.BaseURL
	}
	return "https://api.openai.com/v1"
}

func cloneProfile(p *Profile) *Profile {
	if p == nil {
		return nil
	}
	c := *p
	c.ReasoningEffort = maps.Clone(p.ReasoningEffort)
	return &c
}

// Stream makes one streamed model call and yields its unified events:
// start first, then text, reasoning and tool-input parts as they arrive,
// tool-call for each complete call, and finally finish-step, or an error
// event (Err is an *Error) after which nothing follows. Breaking out of the
// loop early cancels the call and closes the response body. The sequence is
// meant to be ranged over once.
func (p *Provider) Stream(ctx context.Context, req Request) iter.Seq[Event] {
	return streamCall(ctx, p.idle, req, p.stream)
}

func (p *Provider) stream(c *call, req Request) {
	ctx, parent, a := c.ctx, c.parent, c.a

	prof := p.profileFor(req.Model)
	oreq, patch, err := buildRequest(req, p.sendReasoning, prof)
	if err != nil {
		a.fail(&Error{Class: ClassFatal, Message: err.Error(), Err: err})
		return
	}
	sent := p.dropped.adapt(&oreq, patch, optionalMembers(req, prof))
	st := &callState{patch: patch, activity: c.activity}
	stream, err := p.client.CreateChatCompletionStream(withCallState(ctx, st), oreq)
	if err != nil {
		a.fail(p.openError(ctx, parent, st, sent, err))
		return
	}
	defer stream.Close()
	for {
		raw, err := stream.RecvRaw()
		switch {
		case err == nil:
			if !a.payload(raw) {
				return
			}
		case errors.Is(err, io.EOF) && st.facts.Events == 0 && !st.facts.Done:
			a.fail(&Error{Class: ClassRetryable, Err: ErrIncompleteStream, Message: fmt.Sprintf(
				"incomplete stream: the response (HTTP %d, Content-Type %q) carried no data events",
				st.status, st.header.Get("Content-Type"))})
			return
		case errors.Is(err, io.EOF):
			a.end(st.facts.Done)
			return
		case a.sawFinish && parent.Err() == nil:
			// The turn is complete; only the usage chunk or [DONE] was lost
			// (or never came within finishGrace). end reports a
			// finish_reason that was an error.
			a.end(true)
			return
		default:
			a.fail(transportError(ctx, parent, err, "OPENAI_BASE_URL"))
			return
		}
	}
}

// openError classifies a failure to open the stream: an HTTP error status
// (from the status, headers and body the adaptor kept) or a transport error.
// A 400 or 422 that rejects a member of sent drops that member (or sends
// it under its other name: renamable) from then on and asks for an
// immediate resend (Error.Resend).
func (p *Provider) openError(ctx, parent context.Context, st *callState, sent []string, err error) *Error {
	if st.status != 0 && (st.status < http.StatusOK || st.status >= http.StatusBadRequest) {
		b := parseErrorBody(st.errBody)
		if b.Message == "" {
			b.Message = http.StatusText(st.status)
		}
		e := classify(errorFacts{
			Status: st.status, Code: b.Code, Type: b.Type, Message: b.Message,
			Header: st.header, Now: p.now(), InStream: false,
			RetryDelay: b.RetryDelay, QuotaPeriod: b.QuotaPeriod, BodyHeader: b.Header,
		})
		e.Err = err // go-openai's *APIError or *RequestError
		e.Request, e.Hint = st.request, versionHint(st.status, p.versionBase)
		if m := rejectedMember(st.status, b, sent); m != "" && e.Class == ClassFatal {
			e.Class, e.Resend, e.RetryAfter = ClassRetryable, true, 0
			e.Message += " (the runner sends the request again " + p.dropped.rejected(m) + ")"
		}
		return e
	}
	if errors.Is(err, ErrBadRequest) {
		return &Error{Class: ClassFatal, Message: err.Error(), Err: err}
	}
	return transportError(ctx, parent, err, "OPENAI_BASE_URL")
}

// transportError classifies a failed read or send: the caller's cancel is
// fatal (and wraps its cause), an idle timeout and network failures are
// retryable, a cassette that cannot answer is fatal. baseVar is the
// environment variable of the wire's base URL, named in the hint.
func transportError(ctx, parent context.Context, err error, baseVar string) *Error {
	switch {
	case parent.Err() != nil:
		cause := context.Cause(parent)
		return &Error{Class: ClassFatal, Message: "cancelled: " + cause.Error(), Err: cause}
	case errors.Is(context.Cause(ctx), ErrIdleTimeout):
		return &Error{Class: ClassRetryable, Message: "the stream stalled: no data within the idle timeout", Err: ErrIdleTimeout}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Class: ClassRetryable, Message: "incomplete stream: the connection was cut mid-response",
			Err: fmt.Errorf("%w: %w", ErrIncompleteStream, err)}
	case errors.Is(err, ErrCassetteExhausted), errors.Is(err, ErrCassetteMismatch):
		msg := err.Error()
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			msg = ue.Err.Error() // not "Post URL: …": nothing was contacted
		}
		return &Error{Class: ClassFatal, Message: msg, Err: err}
	default:
		if why := unreachable(err); why != "" {
			return &Error{Class: ClassRetryable, Unreachable: true, Err: err,
				Message: "cannot reach the model endpoint: " + why + ": check the base URL (--base-url or " + baseVar + ") or start the server there"}
		}
		return &Error{Class: ClassRetryable, Message: "connection failed: " + err.Error(), Err: err}
	}
}

// unreachable says why err means the endpoint cannot be reached (naming
// its URL), "" for a failure that waiting may cure: a host name that does
// not resolve, or a connection refused on a loopback address.
func unreachable(err error) string {
	where := "the endpoint"
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		where = ue.URL
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return fmt.Sprintf("%s: host %s does not resolve", where, dns.Name)
	}
	var op *net.OpError
	if errors.As(err, &op) && errors.Is(err, syscall.ECONNREFUSED) && op.Addr != nil {
		if ap, perr := netip.ParseAddrPort(op.Addr.String()); perr == nil && ap.Addr().IsLoopback() {
			return fmt.Sprintf("%s: connection refused: nothing listens on %s", where, op.Addr)
		}
	}
	return ""
}
