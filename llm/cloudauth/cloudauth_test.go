package cloudauth_test

import (
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/cloudauth"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// env is a getenv over a fixed map.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// callBedrock makes one anthropic-wire call to srv on Bedrock with auth
// and returns its text and error.
func callBedrock(t *testing.T, srv *llmtest.AnthropicServer, auth llm.Authorizer, region string) (string, *llm.Error) {
	t.Helper()
	p, err := llm.NewAnthropic(llm.Config{BaseURL: srv.URL(), HTTPClient: srv.Client(), Authorizer: auth,
		Cloud: &llm.Cloud{Platform: llm.PlatformBedrock, Region: region}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var callErr *llm.Error
	req := llm.Request{Model: "anthropic.claude-haiku-4-5-20251001-v1:0", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	for ev := range p.Stream(t.Context(), req) {
		switch ev.Type {
		case llm.EventTextDelta:
			text.WriteString(ev.Delta)
		case llm.EventError:
			callErr, _ = ev.Err.(*llm.Error)
			if callErr == nil {
				t.Fatalf("error %v is not an *llm.Error", ev.Err)
			}
		}
	}
	return text.String(), callErr
}

// TestBedrockAPIKey: with AWS_BEARER_TOKEN_BEDROCK set, Bedrock calls
// carry the key as a bearer token and no SigV4 signature, even when AWS
// access keys are set too; the fake Bedrock that requires the key answers,
// and the region comes from AWS_REGION.
func TestBedrockAPIKey(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewBedrockKeyServer(t, llmtest.AnthropicStep{Turn: llmtest.AnthropicTurn{Text: "Hello from Bedrock."}})
	auth, region, err := cloudauth.Bedrock(t.Context(), "", env(map[string]string{
		cloudauth.BedrockTokenVar: llmtest.BedrockAPIKey,
		"AWS_REGION":              llmtest.BedrockRegion,
		"AWS_ACCESS_KEY_ID":       llmtest.BedrockAccessKeyID,
		"AWS_SECRET_ACCESS_KEY":   llmtest.BedrockSecretAccessKey,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if region != llmtest.BedrockRegion {
		t.Errorf("region %q, want %q from AWS_REGION", region, llmtest.BedrockRegion)
	}
	text, callErr := callBedrock(t, srv, auth, region)
	if callErr != nil || text != "Hello from Bedrock." {
		t.Fatalf("text %q, error %v (rejections %v)", text, callErr, srv.Rejections())
	}
	h := srv.Requests()[0].Header
	if h.Get("Authorization") != "Bearer "+llmtest.BedrockAPIKey || h.Get("X-Amz-Date") != "" || h.Get("X-Amz-Security-Token") != "" {
		t.Errorf("Authorization %q, X-Amz-Date %q, X-Amz-Security-Token %q: want the key alone",
			h.Get("Authorization"), h.Get("X-Amz-Date"), h.Get("X-Amz-Security-Token"))
	}
}

// TestBedrockAPIKeyRefused: the key server refuses a wrong key (fatal,
// not retried), so TestBedrockAPIKey's success rests on the key sent.
func TestBedrockAPIKeyRefused(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewBedrockKeyServer(t, llmtest.AnthropicStep{Turn: llmtest.AnthropicTurn{Text: "never"}})
	auth, region, err := cloudauth.Bedrock(t.Context(), llmtest.BedrockRegion, env(map[string]string{cloudauth.BedrockTokenVar: "ABSKwrong"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, callErr := callBedrock(t, srv, auth, region); callErr == nil || callErr.Class != llm.ClassFatal || len(srv.Rejections()) != 1 {
		t.Errorf("a wrong key: error %v, %d rejections; want one fatal refusal", callErr, len(srv.Rejections()))
	}
}
