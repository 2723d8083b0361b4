package pipeline

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// cloudRun is a model stage for Claude on platform with the environment
// env (KEY=VALUE) that cmd passed down.
func cloudRun(platform, region, project string, env ...string) *execRun {
	r := &execRun{opts: ExecOptions{Environ: env}}
	r.spec = &spec.Spec{Model: "claude-sonnet-4-5-20250929",
		Provider: spec.Provider{Platform: platform, Region: region, Project: project}}
	return r
}

// noAWSCredentials empties the AWS SDK's default chain: no variables, no
// shared files, no instance metadata (which would leave loopback).
func noAWSCredentials(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_REGION", "AWS_DEFAULT_REGION"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// TestSetupModelBedrock: Claude on Bedrock without credentials or a region
// exits 2 naming what to set; with a Bedrock API key and AWS_DEFAULT_REGION
// it reaches the region's endpoint, or ANTHROPIC_BEDROCK_BASE_URL.
func TestSetupModelBedrock(t *testing.T) {
	noAWSCredentials(t)
	for _, tc := range []struct {
		name string
		r    *execRun
		want string // in the error; "" for success
		url  string
	}{
		{"no credentials", cloudRun("bedrock", "us-east-1", ""), "AWS_ACCESS_KEY_ID", ""},
		{"no region", cloudRun("bedrock", "", "", "AWS_BEARER_TOKEN_BEDROCK=k"), "needs a region: set provider.region in the spec or AWS_REGION", ""},
		{"region from the environment", cloudRun("bedrock", "", "", "AWS_BEARER_TOKEN_BEDROCK=k", "AWS_DEFAULT_REGION=eu-west-3"),
			"", "https://bedrock-runtime.eu-west-3.amazonaws.com"},
		{"endpoint from the environment", cloudRun("bedrock", "us-east-1", "", "AWS_BEARER_TOKEN_BEDROCK=k",
			"ANTHROPIC_BEDROCK_BASE_URL=http://127.0.0.1:9/br"), "", "http://127.0.0.1:9/br"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.setupModel(t.Context())
			if tc.want != "" {
				if err == nil || ExitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v (exit %d): want exit 2 naming %q", err, ExitCode(err), tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.r.baseURL != tc.url || tc.r.model == nil {
				t.Errorf("base URL %q, model %v: want %q and a model", tc.r.baseURL, tc.r.model, tc.url)
			}
		})
	}
}

// TestSetupModelCloudWire: a cloud platform with --wire openai is refused.
func TestSetupModelCloudWire(t *testing.T) {
	r := cloudRun("bedrock", "us-east-1", "", "AWS_BEARER_TOKEN_BEDROCK=k")
	r.opts.Wire = "openai"
	err := r.setupModel(t.Context())
	if ExitCode(err) != 2 || !strings.Contains(err.Error(), "not --wire openai") {
		t.Fatalf("error %v: want exit 2 refusing --wire openai", err)
	}
}

// googleCredentials writes a service account's key file whose token
// endpoint is a loopback server, sets GOOGLE_APPLICATION_CREDENTIALS to
// it. The account names project ("" for none).
func googleCredentials(t *testing.T, project string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"tok","token_type":"Bearer","expires_in":3600}`))
	}))
	t.Cleanup(srv.Close)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(map[string]string{"type": "service_account", "project_id": project,
		"private_key_id": "k1", "private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "runner@example.iam.gserviceaccount.com", "client_id": "1", "token_uri": srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sa.json")
	mustWrite(t, path, string(data))
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
}

// TestSetupModelVertex: Claude on Vertex without credentials, a location
// or a project exits 2 naming what to set; with all three it reaches the
// location's endpoint.
func TestSetupModelVertex(t *testing.T) {
	t.Run("no credentials", func(t *testing.T) {
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json"))
		err := cloudRun("vertex", "us-east5", "p").setupModel(t.Context())
		if ExitCode(err) != 2 || !strings.Contains(err.Error(), "GOOGLE_APPLICATION_CREDENTIALS") {
			t.Fatalf("error %v: want exit 2 naming GOOGLE_APPLICATION_CREDENTIALS", err)
		}
	})
	for _, tc := range []struct {
		name, saProject string
		r               *execRun
		want, url       string
	}{
		{"no location", "p", cloudRun("vertex", "", ""), "needs a location", ""},
		{"no project", "", cloudRun("vertex", "us-east5", ""), "set provider.project in the spec or ANTHROPIC_VERTEX_PROJECT_ID", ""},
		{"project of the credentials", "p", cloudRun("vertex", "", "", "CLOUD_ML_REGION=global"), "", "https://aiplatform.googleapis.com/v1"},
		{"project from the environment", "", cloudRun("vertex", "us-east5", "", "ANTHROPIC_VERTEX_PROJECT_ID=q"),
			"", "https://us-east5-aiplatform.googleapis.com/v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			googleCredentials(t, tc.saProject)
			err := tc.r.setupModel(t.Context())
			if tc.want != "" {
				if ExitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v: want exit 2 naming %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.r.baseURL != tc.url || tc.r.model == nil {
				t.Errorf("base URL %q, model %v: want %q and a model", tc.r.baseURL, tc.r.model, tc.url)
			}
		})
	}
}

// TestSetupModelCloudReplay: with --replay no credentials are looked up
// and region and project are not required; the cassette is what fails.
func TestSetupModelCloudReplay(t *testing.T) {
	noAWSCredentials(t)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json"))
	for _, p := range []string{"bedrock", "vertex"} {
		r := cloudRun(p, "", "")
		r.opts.Replay = filepath.Join(t.TempDir(), "missing.jsonl")
		err := r.setupModel(t.Context())
		if ExitCode(err) != 2 || !strings.Contains(err.Error(), "--replay") {
			t.Errorf("%s: error %v: want the missing cassette, not credentials", p, err)
		}
	}
}
