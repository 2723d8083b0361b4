// Package cloudauth authorises the anthropic wire's requests on the cloud
// platforms with the vendors' standard credential chains: SigV4 with the
// AWS SDK's default chain (or a Bedrock API key) for Amazon Bedrock, an
// OAuth bearer token from Google application-default credentials for
// Vertex AI.
//
// Imports: llm, aws-sdk-go-v2 (config, signer/v4), golang.org/x/oauth2
// (google) and the standard library.
package cloudauth

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/seed43ef5acb/runner/llm"
)

// BedrockTokenVar holds a Bedrock API key, sent as a bearer token instead
// of a SigV4 signature (as the AWS SDKs and anthropic-sdk-go read it).
const BedrockTokenVar = "AWS_BEARER_TOKEN_BEDROCK"

// VertexScope is the OAuth scope of Vertex AI calls.
const VertexScope = "https://www.googleapis.com/auth/cloud-platform"

// Bedrock returns the SigV4 signer of Bedrock calls in region ("" : the
// chain's AWS_REGION, AWS_DEFAULT_REGION or profile region) and the region
// used. Credentials come from the AWS SDK's default chain (environment,
// shared files and SSO, web identity, container and instance roles) and
// are fetched once here, so a missing credential is an error now, not a
// failed step; AWS_BEARER_TOKEN_BEDROCK, when set, is used instead.
func Bedrock(ctx context.Context, region string, getenv func(string) string) (llm.Authorizer, string, error) {
	if tok := getenv(BedrockTokenVar); tok != "" {
		region = cmp.Or(region, getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"))
		return bearer(tok), region, nil
	}
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("load AWS configuration: %w", err)
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return nil, "", fmt.Errorf("no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, "+
			"a web identity or an instance role, or %s): %w", BedrockTokenVar, err)
	}
	return &sigV4{creds: cfg.Credentials, region: cfg.Region, signer: v4.NewSigner(), now: time.Now}, cfg.Region, nil
}

// sigV4 signs a request for the bedrock service.
type sigV4 struct {
	creds  aws.CredentialsProvider
	region string
	signer *v4.Signer
	now    func() time.Time
}

func (s *sigV4) Authorize(req *http.Request, body []byte) error {
	c, err := s.creds.Retrieve(req.Context())
	if err != nil {
		return fmt.Errorf("AWS credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	return s.signer.SignHTTP(req.Context(), c, req, hex.EncodeToString(sum[:]), "bedrock", s.region, s.now())
}

// bearer is a fixed bearer token.
type bearer string

func (b bearer) Authorize(req *http.Request, _ []byte) error {
	req.Header.Set("Authorization", "Bearer "+string(b))
	return nil
}

// Vertex returns the bearer-token authoriser of Vertex calls from Google
// application-default credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's
// file, the metadata server) and the credentials' project, if they name
// one. The first token is fetched here, so missing credentials are an
// error now; tokens are refreshed before they expire.
func Vertex(ctx context.Context) (llm.Authorizer, string, error) {
	creds, err := google.FindDefaultCredentials(ctx, VertexScope)
	if err != nil {
		return nil, "", fmt.Errorf("no Google application-default credentials (set GOOGLE_APPLICATION_CREDENTIALS "+
			"or run gcloud auth application-default login): %w", err)
	}
	ts := oauth2.ReuseTokenSource(nil, creds.TokenSource)
	if _, err := ts.Token(); err != nil {
		return nil, "", fmt.Errorf("the Google application-default credentials gave no token (check GOOGLE_APPLICATION_CREDENTIALS, "+
			"or run gcloud auth application-default login): %w", err)
	}
	return tokenSource{ts}, creds.ProjectID, nil
}

type tokenSource struct{ ts oauth2.TokenSource }

func (t tokenSource) Authorize(req *http.Request, _ []byte) error {
	tok, err := t.ts.Token()
	if err != nil {
		return fmt.Errorf("google credentials: %w", err)
	}
	tok.SetAuthHeader(req)
	return nil
}
