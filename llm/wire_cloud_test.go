package llm_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// testSigV4 signs with the fake Bedrock's credentials.
type testSigV4 struct{ secret string }

func (s testSigV4) Authorize(req *http.Request, body []byte) error {
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: llmtest.BedrockAccessKeyID, SecretAccessKey: s.secret}
	return v4.NewSigner().SignHTTP(req.Context(), creds, req, hex.EncodeToString(sum[:]), "bedrock", llmtest.BedrockRegion, time.Now())
}

type testBearer string

func (b testBearer) Authorize(req *http.Request, _ []byte) error {
	req.Header.Set("Authorization", "Bearer "+string(b))
	return nil
}

func newCloud(t testing.TB, srv *llmtest.AnthropicServer, platform llm.Platform, auth llm.Authorizer) *llm.NativeProvider {
	t.Helper()
	cloud := &llm.Cloud{Platform: platform, Region: llmtest.BedrockRegion}
	if platform == llm.PlatformVertex {
		cloud = &llm.Cloud{Platform: platform, Region: llmtest.VertexRegion, Project: llmtest.VertexProject}
	}
	p, err := llm.NewAnthropic(llm.Config{BaseURL: srv.URL(), HTTPClient: srv.Client(), Cloud: cloud, Authorizer: auth})
	return mustNative(t, p, err)
}

// TestCloudThreeStepSession runs the three-step session with thinking
// and parallel calls on Bedrock (SigV4, event-stream framing) and Vertex
// (bearer token, SSE); each platform's personality accepts every request,
// whose body carries the platform's anthropic_version and no model.
func TestCloudThreeStepSession(t *testing.T) {
	t.Parallel()
	script := []llmtest.AnthropicStep{
		turn(llmtest.AnthropicTurn{Thinking: "Read the test.", Signature: "sig-cloud-1",
			ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: `{"path":"calc/calc_test.go"}`}}}),
		turn(llmtest.AnthropicTurn{ToolCalls: []llmtest.ToolCall{{Name: "read", Arguments: `{"path":"calc/calc.go"}`},
			{Name: "grep", Arguments: `{"path":"calc","pattern":"Add"}`}}}),
		turn(llmtest.AnthropicTurn{Text: "Fixed."}),
	}
	for _, tc := range []struct {
		platform llm.Platform
		srv      *llmtest.AnthropicServer
		auth     llm.Authorizer
		version  string
	}{
		{llm.PlatformBedrock, llmtest.NewBedrockServer(t, script...), testSigV4{llmtest.BedrockSecretAccessKey}, llm.BedrockAnthropicVersion},
		{llm.PlatformVertex, llmtest.NewVertexServer(t, script...), testBearer(llmtest.VertexToken), llm.VertexAnthropicVersion},
	} {
		t.Run(string(tc.platform), func(t *testing.T) {
			steps := threeSteps(t, newCloud(t, tc.srv, tc.platform, tc.auth), "claude-sonnet-4-5", tc.srv.Rejections)
			if steps[0].msg.Reasoning != "Read the test." || len(steps[1].msg.ToolCalls) != 2 || steps[2].msg.Content != "Fixed." {
				t.Errorf("steps %+v", steps)
			}
			reqs := tc.srv.Requests()
			if v, _ := reqs[0].Body["anthropic_version"].(string); v != tc.version || reqs[0].Body["model"] != nil {
				t.Errorf("body version %q model %v", v, reqs[0].Body["model"])
			}
			if !strings.Contains(string(reqs[1].Raw), `"signature":"sig-cloud-1"`) {
				t.Errorf("the thinking signature did not go back")
			}
			if steps[1].finish.Usage == nil || steps[2].finish.Usage.CachedInputTokens == 0 {
				t.Errorf("cache reads not reported: %+v", steps[2].finish.Usage)
			}
		})
	}
}

// TestCloudErrors classifies the platforms' errors: Bedrock's 503, its
// throttling (in-stream, or HTTP 400 named by x-amzn-ErrorType) and
// server exceptions are retried, a validation error is fatal, a stream
// cut between messages is retried; Vertex's 529 is retried; a bad
// signature or token is fatal.
func TestCloudErrors(t *testing.T) {
	t.Parallel()
	raw := func(r llmtest.Reply) llmtest.AnthropicStep { return llmtest.AnthropicStep{Raw: &r} }
	start := llmtest.EventStream(llmtest.AnthropicTurn{Text: "x", CutBeforeStop: true}.Reply()).Body
	exception := func(name, msg string) llmtest.Reply {
		return llmtest.Reply{Body: append(append([]byte{}, start...), llmtest.BedrockException(name, msg)...),
			Header: map[string]string{"Content-Type": "application/vnd.amazon.eventstream"}}
	}
	unavailable := llmtest.HTTPError(503, `{"message":"Bedrock is unable to process your request."}`,
		"x-amzn-ErrorType", "ServiceUnavailableException:http://internal.amazon.com/coral/com.amazon.bedrock/")
	amzn := func(status int, typ, msg string) llmtest.AnthropicStep {
		return raw(llmtest.HTTPError(status, `{"message":"`+msg+`"}`, "x-amzn-ErrorType", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/"))
	}
	for _, tc := range []struct {
		name     string
		platform llm.Platform
		step     llmtest.AnthropicStep
		auth     llm.Authorizer
		class    llm.ErrorClass
	}{
		{"bedrock 503", llm.PlatformBedrock, raw(unavailable), nil, llm.ClassRetryable},
		// Bedrock throttles with HTTP 400 too; the exception name decides
		// (anthropics/anthropic-sdk-python#1289, #940).
		{"bedrock throttling as a 400", llm.PlatformBedrock, amzn(400, "ThrottlingException", "Rate exceeded"), nil, llm.ClassRetryable},
		{"bedrock too many requests as a 400", llm.PlatformBedrock, amzn(400, "TooManyRequestsException", "Too many requests"), nil, llm.ClassRetryable},
		// ModelNotReadyException is modeled as transient, ModelErrorException
		// is not (majiayu000/litellm-rs#1014).
		{"bedrock model not ready as a 424", llm.PlatformBedrock, amzn(424, "ModelNotReadyException", "Model is not ready to serve inference requests."), nil, llm.ClassRetryable},
		{"bedrock model error 424 stays fatal", llm.PlatformBedrock, amzn(424, "ModelErrorException", "The model produced an invalid response."), nil, llm.ClassFatal},
		{"bedrock validation 400 stays fatal", llm.PlatformBedrock, amzn(400, "ValidationException", "messages.0.content: Field required"), nil, llm.ClassFatal},
		{"bedrock prompt too long 400", llm.PlatformBedrock, amzn(400, "ValidationException", "The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum"), nil, llm.ClassContextOverflow},
		{"bedrock __type in the body", llm.PlatformBedrock, raw(llmtest.HTTPError(400, `{"__type":"com.amazon.coral.availability#ThrottlingException","message":"Rate exceeded"}`)), nil, llm.ClassRetryable},
		{"bedrock throttling in stream", llm.PlatformBedrock, raw(exception("throttlingException", "Too many tokens, please wait before trying again.")), nil, llm.ClassRetryable},
		{"bedrock server error in stream", llm.PlatformBedrock, raw(exception("internalServerException", "The system encountered an unexpected error during processing.")), nil, llm.ClassRetryable},
		{"bedrock validation in stream", llm.PlatformBedrock, raw(exception("validationException", "messages.1.content: tool_use ids must be unique")), nil, llm.ClassFatal},
		{"bedrock too long in stream", llm.PlatformBedrock, raw(exception("validationException", "Input is too long for requested model.")), nil, llm.ClassContextOverflow},
		{"bedrock cut", llm.PlatformBedrock, turn(llmtest.AnthropicTurn{Text: "half", CutBeforeStop: true}), nil, llm.ClassRetryable},
		{"bedrock wrong secret", llm.PlatformBedrock, turn(llmtest.AnthropicTurn{Text: "never"}), testSigV4{"wrong"}, llm.ClassFatal},
		{"vertex 529", llm.PlatformVertex, raw(llmtest.AnthropicOverloaded()), nil, llm.ClassRetryable},
		{"vertex cut", llm.PlatformVertex, turn(llmtest.AnthropicTurn{Text: "half", CutBeforeStop: true}), nil, llm.ClassRetryable},
		{"vertex wrong token", llm.PlatformVertex, turn(llmtest.AnthropicTurn{Text: "never"}), testBearer("ya29.other"), llm.ClassFatal},
	} {
		srv, auth := llmtest.NewVertexServer(t, tc.step), llm.Authorizer(testBearer(llmtest.VertexToken))
		if tc.platform == llm.PlatformBedrock {
			srv, auth = llmtest.NewBedrockServer(t, tc.step), testSigV4{llmtest.BedrockSecretAccessKey}
		}
		if tc.auth != nil {
			auth = tc.auth
		}
		r := callOnce(t, newCloud(t, srv, tc.platform, auth), llm.Request{Model: "claude-haiku-4-5", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		if r.err == nil || r.err.Class != tc.class {
			t.Errorf("%s: error %v, want class %s", tc.name, r.err, tc.class)
		}
	}
}
