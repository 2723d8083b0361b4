package llmtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"hash/crc32"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The fake Bedrock's region and the credentials it checks signatures with.
const (
	BedrockRegion          = "us-east-1"
	BedrockAccessKeyID     = "AKIDLLMTEST0EXAMPLE0"
	BedrockSecretAccessKey = "llmtest/bedrock/secret/0123456789abcdef"
)

// The fake Vertex AI's project, location and the token its token endpoint
// grants (and its model endpoint requires).
const (
	VertexProject = "llmtest-project"
	VertexRegion  = "us-east5"
	VertexToken   = "ya29.llmtest-access-token-0123456789"
)

// BedrockAPIKey is the Bedrock API key NewBedrockKeyServer requires, in
// the ABSK form the AWS console issues.
const BedrockAPIKey = "ABSKbGxtdGVzdC1iZWRyb2NrLWtleS1hdC0wMTIzNDU2Nzg5OmxsbXRlc3Qvc2VjcmV0"

// BedrockRuntime is Amazon Bedrock's InvokeModelWithResponseStream for
// Claude: a SigV4 signature for service bedrock, the model in the path,
// anthropic_version bedrock-2023-05-31 and no model or stream in the body
// (docs.aws.amazon.com/bedrock, "Anthropic Claude Messages API"); then the
// Messages API's own rules, answered as Bedrock's ValidationException.
func BedrockRuntime() Personality {
	return Personality{Name: "bedrock-runtime", Source: "Amazon Bedrock InvokeModelWithResponseStream (docs.aws.amazon.com/bedrock/latest/APIReference)",
		check: func(req RecordedRequest) (Reply, bool) { return bedrockCheck(req, sigV4Auth) }}
}

// BedrockRuntimeKey is BedrockRuntime authenticated by a Bedrock API key:
// "Authorization: Bearer <key>" and no SigV4 signature. A request with
// neither, or with a bearer token and SigV4 headers both, is refused
// (docs.aws.amazon.com/bedrock, "Use an Amazon Bedrock API key").
func BedrockRuntimeKey(key string) Personality {
	return Personality{Name: "bedrock-runtime-key", Source: "Amazon Bedrock InvokeModelWithResponseStream with a Bedrock API key (docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html)",
		check: func(req RecordedRequest) (Reply, bool) {
			return bedrockCheck(req, func(r RecordedRequest) (string, string) { return bearerAuth(r, key) })
		}}
}

// sigV4Auth is the SigV4 check as an authentication rule: the AWS error
// type and message, or "" when the signature matches.
func sigV4Auth(req RecordedRequest) (string, string) {
	if msg := verifySigV4(req); msg != "" {
		return "InvalidSignatureException", msg
	}
	return "", ""
}

// bearerAuth checks a Bedrock API key sent as a bearer token: the AWS
// error type and message, or "" when the request carries exactly key.
func bearerAuth(req RecordedRequest, key string) (string, string) {
	auths := req.Header.Values("Authorization")
	sigV4 := req.Header.Get("X-Amz-Date") != "" || req.Header.Get("X-Amz-Security-Token") != "" ||
		strings.Contains(req.Query, "X-Amz-Signature=")
	switch {
	case len(auths) == 0 && !sigV4:
		return "MissingAuthenticationTokenException", "Missing Authentication Token"
	case len(auths) > 1 || sigV4 && len(auths) == 1 && strings.HasPrefix(auths[0], "Bearer "):
		return "InvalidSignatureException", "Only one auth mechanism allowed: a Bedrock API key (Authorization: Bearer) or a SigV4 signature, not both."
	case len(auths) == 0 || !strings.HasPrefix(auths[0], "Bearer "):
		return "UnrecognizedClientException", "This endpoint accepts a Bedrock API key only: send Authorization: Bearer <key>."
	case strings.TrimPrefix(auths[0], "Bearer ") != key:
		return "UnrecognizedClientException", "The security token included in the request is invalid."
	}
	return "", ""
}

var bedrockPath = regexp.MustCompile(`/model/([^/]+)/invoke-with-response-stream$`)

// bedrockCheck judges a request with auth, the authentication rule.
func bedrockCheck(req RecordedRequest, auth func(RecordedRequest) (string, string)) (Reply, bool) {
	amz := func(status int, typ, msg string) (Reply, bool) {
		r := jsonReply(status, map[string]string{"message": msg})
		r.Header["x-amzn-ErrorType"] = typ + ":http://internal.amazon.com/coral/com.amazon.bedrock/"
		return r, true
	}
	m := bedrockPath.FindStringSubmatch(req.Path)
	if req.Method != http.MethodPost || m == nil {
		return amz(http.StatusNotFound, "UnknownOperationException", "Unknown operation "+req.Method+" "+req.Path)
	}
	if typ, msg := auth(req); msg != "" {
		return amz(http.StatusForbidden, typ, msg)
	}
	if req.Body == nil {
		return amz(http.StatusBadRequest, "ValidationException", "Malformed input request, please reformat your input and try again.")
	}
	for _, key := range []string{"model", "stream"} {
		if _, ok := req.Body[key]; ok {
			return amz(http.StatusBadRequest, "ValidationException",
				"Malformed input request: #: extraneous key ["+key+"] is not permitted, please reformat your input and try again.")
		}
	}
	if v, _ := req.Body["anthropic_version"].(string); v != "bedrock-2023-05-31" {
		return amz(http.StatusBadRequest, "ValidationException",
			"Malformed input request: #: required key [anthropic_version] not found or not bedrock-2023-05-31, please reformat your input and try again.")
	}
	if r, bad := anthropicCheck(asMessages(req, m[1])); bad {
		var body struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.Unmarshal(r.Body, &body)
		return amz(r.Status, "ValidationException", body.Error.Message)
	}
	return Reply{}, false
}

// verifySigV4 recomputes the request's signature with the fake's secret,
// over the headers it says it signed: "" when it matches.
func verifySigV4(req RecordedRequest) string {
	auth := req.Header.Get("Authorization")
	cred := regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$`).
		FindStringSubmatch(auth)
	if cred == nil {
		return "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters (AWS4-HMAC-SHA256). Authorization=" + auth
	}
	if cred[1] != BedrockAccessKeyID {
		return "The security token included in the request is invalid."
	}
	if cred[3] != BedrockRegion || cred[4] != "bedrock" {
		return fmt.Sprintf("Credential should be scoped to a valid region and service: got %s/%s, want %s/bedrock", cred[3], cred[4], BedrockRegion)
	}
	when, err := time.Parse("20060102T150405Z", req.Header.Get("X-Amz-Date"))
	if err != nil {
		return "Missing or malformed X-Amz-Date header."
	}
	u := req.Path
	if req.RawPath != "" {
		u = req.RawPath
	}
	if req.Query != "" {
		u += "?" + req.Query
	}
	again, _ := http.NewRequestWithContext(context.Background(), req.Method, "http://"+req.Host+u, bytes.NewReader(req.Raw))
	for _, h := range strings.Split(cred[5], ";") {
		if h != "host" {
			again.Header[http.CanonicalHeaderKey(h)] = req.Header.Values(h)
		}
	}
	sum := sha256.Sum256(req.Raw)
	creds := aws.Credentials{AccessKeyID: BedrockAccessKeyID, SecretAccessKey: BedrockSecretAccessKey,
		SessionToken: req.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "bedrock", BedrockRegion, when); err != nil {
		return err.Error()
	}
	if again.Header.Get("Authorization") != auth {
		return "The request signature we calculated does not match the signature you provided. " +
			"Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
	}
	return ""
}

// asMessages is a cloud request as the Messages API would have received
// it, for its content rules.
func asMessages(req RecordedRequest, model string) RecordedRequest {
	out := req
	out.Path = "/v1/messages"
	out.Header = req.Header.Clone()
	out.Header.Set("x-api-key", "cloud")
	out.Header.Set("anthropic-version", "2023-06-01")
	out.Body = maps.Clone(req.Body)
	out.Body["model"] = model
	return out
}

// VertexAI is Vertex AI's streamRawPredict for Claude: the project,
// location and model in the path, the bearer token VertexToken,
// anthropic_version vertex-2023-10-16 in the body (cloud.google.com,
// "Use Anthropic's Claude models"); then the Messages API's own rules.
func VertexAI() Personality {
	return Personality{Name: "vertex-ai", Source: "Vertex AI publishers/anthropic streamRawPredict (cloud.google.com/vertex-ai)",
		check: vertexCheck}
}

var vertexPath = regexp.MustCompile(`/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/:]+):streamRawPredict$`)

func vertexCheck(req RecordedRequest) (Reply, bool) {
	google := func(status int, code, msg string) (Reply, bool) {
		return jsonReply(status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": code}}), true
	}
	m := vertexPath.FindStringSubmatch(req.Path)
	if req.Method != http.MethodPost || m == nil || m[1] != VertexProject || m[2] != VertexRegion {
		return google(http.StatusNotFound, "NOT_FOUND", "Publisher Model `"+req.Path+"` was not found or your project does not have access to it.")
	}
	if req.Header.Get("Authorization") != "Bearer "+VertexToken {
		return google(http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials. "+
			"Expected OAuth 2 access token, login cookie or other valid authentication credential.")
	}
	if req.Body == nil {
		return AnthropicError(http.StatusBadRequest, "invalid_request_error", "There was an error parsing the body of your request."), true
	}
	if v, _ := req.Body["anthropic_version"].(string); v != "vertex-2023-10-16" {
		return AnthropicError(http.StatusBadRequest, "invalid_request_error", "anthropic_version: Input should be 'vertex-2023-10-16'"), true
	}
	return anthropicCheck(asMessages(req, m[3]))
}

// NewBedrockServer is NewAnthropicServer behind BedrockRuntime: turns are
// sent in AWS event-stream framing (EventStream). Its URL is the base URL.
func NewBedrockServer(t testing.TB, script ...AnthropicStep) *AnthropicServer {
	t.Helper()
	return newAnthropicServer(t, BedrockRuntime(), EventStream, script)
}

// NewBedrockKeyServer is NewBedrockServer authenticated by the Bedrock API
// key BedrockAPIKey (AWS_BEARER_TOKEN_BEDROCK) instead of SigV4.
func NewBedrockKeyServer(t testing.TB, script ...AnthropicStep) *AnthropicServer {
	t.Helper()
	return newAnthropicServer(t, BedrockRuntimeKey(BedrockAPIKey), EventStream, script)
}

// NewVertexServer is NewAnthropicServer behind VertexAI, with a token
// endpoint (TokenURL) that grants VertexToken. Its URL is the base URL.
func NewVertexServer(t testing.TB, script ...AnthropicStep) *AnthropicServer {
	t.Helper()
	s := newAnthropicServer(t, VertexAI(), nil, script)
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, VertexToken)
	}))
	t.Cleanup(tokens.Close)
	s.TokenURL = tokens.URL + "/token"
	return s
}

// EventStream turns a 200 SSE reply into Bedrock's (one already framed,
// Content-Type set, is left as it is): each data payload a
// chunk message {"bytes": base64} of AWS event-stream framing
// (docs.aws.amazon.com, "Event stream encoding"), hand-encoded here so the
// AWS decoder in the client checks it independently.
func EventStream(r Reply) Reply {
	if r.Status != 0 && r.Status != http.StatusOK || r.Header["Content-Type"] == eventStreamType {
		return r
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		payload, _ := json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString([]byte(data)), "p": "abcdefghijklmnopqrstuvwxyzABCDEF"[:len(data)%32]})
		out.Write(EventStreamMessage(payload, ":event-type", "chunk", ":content-type", "application/json", ":message-type", "event"))
	}
	r.Body = out.Bytes()
	r.Header = maps.Clone(r.Header)
	if r.Header == nil {
		r.Header = map[string]string{}
	}
	r.Header["Content-Type"] = eventStreamType
	return r
}

// eventStreamType is the Content-Type of AWS event-stream bodies.
const eventStreamType = "application/vnd.amazon.eventstream"

// EventStreamMessage encodes one event-stream message with string headers
// (name, value pairs): prelude (total and headers length, CRC32), headers,
// payload, message CRC32.
func EventStreamMessage(payload []byte, headers ...string) []byte {
	var hs bytes.Buffer
	for i := 0; i+1 < len(headers); i += 2 {
		hs.WriteByte(byte(len(headers[i])))
		hs.WriteString(headers[i])
		hs.WriteByte(7) // string
		_ = binary.Write(&hs, binary.BigEndian, uint16(len(headers[i+1])))
		hs.WriteString(headers[i+1])
	}
	total := 12 + hs.Len() + len(payload) + 4
	msg := make([]byte, 0, total)
	msg = binary.BigEndian.AppendUint32(msg, uint32(total))
	msg = binary.BigEndian.AppendUint32(msg, uint32(hs.Len()))
	msg = binary.BigEndian.AppendUint32(msg, crc32.ChecksumIEEE(msg))
	msg = append(msg, hs.Bytes()...)
	msg = append(msg, payload...)
	return binary.BigEndian.AppendUint32(msg, crc32.ChecksumIEEE(msg))
}

// BedrockException is an exception message inside a 200 event stream
// (throttlingException, internalServerException, …).
func BedrockException(exception, message string) []byte {
	payload, _ := json.Marshal(map[string]string{"message": message})
	return EventStreamMessage(payload, ":exception-type", exception, ":content-type", "application/json", ":message-type", "exception")
}

// VertexCredentials writes a service-account key file whose token_uri is
// the fake's token endpoint, for GOOGLE_APPLICATION_CREDENTIALS, and
// returns its path.
func (s *AnthropicServer) VertexCredentials(t testing.TB, dir string) string {
	t.Helper()
	return writeServiceAccount(t, dir, s.TokenURL)
}

// writeServiceAccount writes a Google service-account key file with a
// fresh RSA key and the given token endpoint.
func writeServiceAccount(t testing.TB, dir, tokenURL string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	data, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": VertexProject, "private_key_id": "llmtest",
		"private_key": string(pemKey), "client_email": "runner@" + VertexProject + ".iam.gserviceaccount.com",
		"client_id": "1", "token_uri": tokenURL,
	})
	path := filepath.Join(dir, "vertex-service-account.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
