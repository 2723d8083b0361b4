package llmtest_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/bedrock"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/vertex"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"golang.org/x/oauth2/google"

	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// sdkTurn is a turn with every kind of block, for the SDK clients.
var sdkTurn = llmtest.AnthropicTurn{Thinking: "Check the file.", Signature: "sig-sdk", Text: "Reading it.",
	ToolCalls: []llmtest.ToolCall{{ID: "toolu_sdk", Name: "read", Arguments: `{"path":"a.go"}`}}}

// accumulate streams one message with client and checks it is sdkTurn.
func accumulate(t *testing.T, client anthropic.Client, srv *llmtest.AnthropicServer, model string) {
	t.Helper()
	params := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Read a.go"))}}
	stream := client.Messages.NewStreaming(t.Context(), params)
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatalf("accumulate: %v", err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v (rejections %v)", err, srv.Rejections())
	}
	if len(msg.Content) != 3 || msg.Content[0].Signature != "sig-sdk" || msg.Content[1].Text != "Reading it." ||
		string(msg.Content[2].Input) != `{"path":"a.go"}` || msg.StopReason != anthropic.StopReasonToolUse {
		t.Errorf("accumulated %+v, stop %q", msg.Content, msg.StopReason)
	}
}

// TestBedrockFakeWithOfficialSDK reads the fake Bedrock with
// anthropic-sdk-go's bedrock client: its SigV4 signature passes the fake's
// check, its body passes Bedrock's rules, and its AWS event-stream decoder
// reads the fake's hand-encoded frames. A wrong secret is refused (403).
func TestBedrockFakeWithOfficialSDK(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewBedrockServer(t, llmtest.AnthropicStep{Turn: sdkTurn})
	cfg := func(secret string) aws.Config {
		return aws.Config{Region: llmtest.BedrockRegion,
			Credentials: credentials.NewStaticCredentialsProvider(llmtest.BedrockAccessKeyID, secret, "")}
	}
	client := func(secret string) anthropic.Client {
		return anthropic.NewClient(bedrock.WithConfig(cfg(secret)), option.WithBaseURL(srv.URL()+"/"),
			option.WithHTTPClient(srv.Client()), option.WithMaxRetries(0),
			// The SDK moves the version header into the body; Bedrock documents this one.
			option.WithHeader("anthropic-version", "bedrock-2023-05-31"))
	}
	accumulate(t, client(llmtest.BedrockSecretAccessKey), srv, "anthropic.claude-sonnet-4-5-20250929-v1:0")
	if got := srv.Requests()[0].Path; !strings.HasSuffix(got, "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream") {
		t.Errorf("path %s", got)
	}

	bad := client("wrong-secret")
	stream := bad.Messages.NewStreaming(t.Context(), anthropic.MessageNewParams{Model: "anthropic.claude-sonnet-4-5-20250929-v1:0",
		MaxTokens: 10, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	for stream.Next() {
	}
	var apiErr *anthropic.Error
	if err := stream.Err(); !asError(err, &apiErr) || apiErr.StatusCode != http.StatusForbidden ||
		!strings.Contains(apiErr.Error(), "signature we calculated does not match") {
		t.Errorf("a wrong secret: %v", err)
	}
}

// TestVertexFakeWithOfficialSDK reads the fake Vertex AI with
// anthropic-sdk-go's vertex client, its token from the fake's token
// endpoint through Google's service-account flow.
func TestVertexFakeWithOfficialSDK(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewVertexServer(t, llmtest.AnthropicStep{Turn: sdkTurn})
	data, err := readFile(srv.VertexCredentials(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	creds, err := google.CredentialsFromJSONWithType(t.Context(), data, google.ServiceAccount, "https://www.googleapis.com/auth/cloud-platform")
	if err != nil {
		t.Fatal(err)
	}
	client := anthropic.NewClient(option.WithHTTPClient(&http.Client{}),
		vertex.WithCredentials(t.Context(), llmtest.VertexRegion, llmtest.VertexProject, creds),
		option.WithBaseURL(strings.TrimSuffix(srv.URL(), "/v1")+"/"), option.WithMaxRetries(0),
		option.WithHeader("anthropic-version", "vertex-2023-10-16"))
	accumulate(t, client, srv, "claude-sonnet-4-5@20250929")
	want := "/v1/projects/" + llmtest.VertexProject + "/locations/" + llmtest.VertexRegion +
		"/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
	if got := srv.Requests()[0].Path; got != want {
		t.Errorf("path %s, want %s", got, want)
	}
}

// TestBedrockKeyFakeWithOfficialSDK reads the fake Bedrock configured for
// a Bedrock API key with anthropic-sdk-go's bearer client. The fake
// refuses a wrong key, a SigV4 signature instead of the key, no
// credentials, and a bearer token alongside SigV4 headers (403 each).
func TestBedrockKeyFakeWithOfficialSDK(t *testing.T) {
	t.Parallel()
	const model = "anthropic.claude-sonnet-4-5-20250929-v1:0"
	srv := llmtest.NewBedrockKeyServer(t, llmtest.AnthropicStep{Turn: sdkTurn})
	client := func(cfg aws.Config) anthropic.Client {
		cfg.Region = llmtest.BedrockRegion
		return anthropic.NewClient(bedrock.WithConfig(cfg), option.WithBaseURL(srv.URL()+"/"),
			option.WithHTTPClient(srv.Client()), option.WithMaxRetries(0),
			option.WithHeader("anthropic-version", "bedrock-2023-05-31"))
	}
	accumulate(t, client(aws.Config{BearerAuthTokenProvider: bedrock.NewStaticBearerTokenProvider(llmtest.BedrockAPIKey)}), srv, model)
	first := srv.Requests()[0]
	if got := first.Header.Get("Authorization"); got != "Bearer "+llmtest.BedrockAPIKey || first.Header.Get("X-Amz-Date") != "" {
		t.Errorf("the SDK sent Authorization %q, X-Amz-Date %q", got, first.Header.Get("X-Amz-Date"))
	}

	for _, tc := range []struct {
		name string
		cfg  aws.Config
		want string
	}{
		{"wrong key", aws.Config{BearerAuthTokenProvider: bedrock.NewStaticBearerTokenProvider("ABSKother")}, "security token included in the request is invalid"},
		{"sigv4", aws.Config{Credentials: credentials.NewStaticCredentialsProvider(llmtest.BedrockAccessKeyID, llmtest.BedrockSecretAccessKey, "")}, "Bedrock API key only"},
	} {
		c := client(tc.cfg)
		stream := c.Messages.NewStreaming(t.Context(), anthropic.MessageNewParams{Model: model,
			MaxTokens: 10, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
		for stream.Next() {
		}
		var apiErr *anthropic.Error
		if err := stream.Err(); !asError(err, &apiErr) || apiErr.StatusCode != http.StatusForbidden || !strings.Contains(apiErr.Error(), tc.want) {
			t.Errorf("%s: %v, want 403 saying %q", tc.name, err, tc.want)
		}
	}

	// Neither and both, sent by hand: no SDK builds them.
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{"neither", nil, "MissingAuthenticationTokenException"},
		{"both", map[string]string{"Authorization": "Bearer " + llmtest.BedrockAPIKey, "X-Amz-Date": "20261206T000000Z",
			"X-Amz-Security-Token": "session"}, "InvalidSignatureException"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/model/"+model+"/invoke-with-response-stream",
			bytes.NewReader(first.Raw))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.headers {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get("x-amzn-ErrorType"), tc.want) {
			t.Errorf("%s: %d %s, want 403 %s", tc.name, resp.StatusCode, resp.Header.Get("x-amzn-ErrorType"), tc.want)
		}
	}
	if n := len(srv.Rejections()); n != 4 {
		t.Errorf("%d rejections, want 4", n)
	}
}

// TestBedrockFakeRefusesKey: the SigV4 fake refuses a Bedrock API key,
// so a run meant to sign cannot pass by sending a bearer token.
func TestBedrockFakeRefusesKey(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewBedrockServer(t, llmtest.AnthropicStep{Turn: sdkTurn})
	client := anthropic.NewClient(bedrock.WithConfig(aws.Config{Region: llmtest.BedrockRegion,
		BearerAuthTokenProvider: bedrock.NewStaticBearerTokenProvider(llmtest.BedrockAPIKey)}),
		option.WithBaseURL(srv.URL()+"/"), option.WithHTTPClient(srv.Client()), option.WithMaxRetries(0))
	stream := client.Messages.NewStreaming(t.Context(), anthropic.MessageNewParams{Model: "anthropic.claude-sonnet-4-5-20250929-v1:0",
		MaxTokens: 10, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	for stream.Next() {
	}
	var apiErr *anthropic.Error
	if err := stream.Err(); !asError(err, &apiErr) || apiErr.StatusCode != http.StatusForbidden {
		t.Errorf("a bearer token on the SigV4 fake: %v, want 403", err)
	}
}
