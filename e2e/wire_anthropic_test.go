package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

const anthropicSpec = `version: 1
name: small
model: claude-sonnet-4-5
prompt: Make status.txt say fixed.
provider: {wire: anthropic}
permissions:
  read: allow
  edit:
    "**": allow
checks:
  - name: status
    run: grep -q fixed status.txt
`

func anthropicStep(t llmtest.AnthropicTurn) llmtest.AnthropicStep {
	return llmtest.AnthropicStep{Turn: t}
}

func writeCall(content string) []llmtest.ToolCall {
	return []llmtest.ToolCall{{Name: "write", Arguments: `{"path":"status.txt","content":"` + content + `\n"}`}}
}

// claudePlatform is where the anthropic wire reaches Claude in a test:
// Anthropic's API, or Bedrock or Vertex through their fakes.
type claudePlatform struct {
	name string
	spec string // the task spec
	// server starts the platform's fake with a script.
	server func(t testing.TB, steps ...llmtest.AnthropicStep) *llmtest.AnthropicServer
	// env is the environment with the platform's credentials for srv.
	env func(t *testing.T, srv *llmtest.AnthropicServer) []string
	// overloaded is the platform's "try again later" reply.
	overloaded llmtest.Reply
	// secrets must appear in no file the run writes.
	secrets []string
	// authorized checks the first request's credentials.
	authorized func(h http.Header) bool
}

func claudePlatforms() []claudePlatform {
	overloaded := llmtest.AnthropicOverloaded()
	overloaded.Header["retry-after"] = "0"
	unavailable := llmtest.HTTPError(503, `{"message":"Bedrock is unable to process your request."}`,
		"x-amzn-ErrorType", "ServiceUnavailableException:http://internal.amazon.com/coral/com.amazon.bedrock/", "retry-after", "0")
	const key = "sk-ant-test-0123456789"
	return []claudePlatform{{
		name: "anthropic", spec: anthropicSpec, server: llmtest.NewAnthropicServer, overloaded: overloaded,
		env: func(t *testing.T, _ *llmtest.AnthropicServer) []string {
			t.Helper()
			return append(baseEnv(t), "ANTHROPIC_API_KEY="+key)
		},
		secrets:    []string{key},
		authorized: func(h http.Header) bool { return h.Get("x-api-key") == key && h.Get("anthropic-version") != "" },
	}, {
		name: "bedrock", server: llmtest.NewBedrockServer, overloaded: unavailable,
		spec: strings.NewReplacer("model: claude-sonnet-4-5", "model: us.anthropic.claude-sonnet-4-5-20250929-v1:0",
			"provider: {wire: anthropic}", "provider: {platform: bedrock, region: "+llmtest.BedrockRegion+"}").Replace(anthropicSpec),
		env: func(t *testing.T, _ *llmtest.AnthropicServer) []string {
			t.Helper()
			none := filepath.Join(t.TempDir(), "none")
			return append(baseEnv(t), "AWS_ACCESS_KEY_ID="+llmtest.BedrockAccessKeyID, "AWS_SECRET_ACCESS_KEY="+llmtest.BedrockSecretAccessKey,
				"AWS_CONFIG_FILE="+none, "AWS_SHARED_CREDENTIALS_FILE="+none, "AWS_EC2_METADATA_DISABLED=true")
		},
		secrets: []string{llmtest.BedrockSecretAccessKey},
		authorized: func(h http.Header) bool {
			return strings.HasPrefix(h.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=")
		},
	}, {
		// A Bedrock API key: AWS access keys set too, so a run that signed
		// instead of sending the key would be refused by the key fake.
		name: "bedrock-key", server: llmtest.NewBedrockKeyServer, overloaded: unavailable,
		spec: strings.NewReplacer("model: claude-sonnet-4-5", "model: us.anthropic.claude-sonnet-4-5-20250929-v1:0",
			"provider: {wire: anthropic}", "provider: {platform: bedrock, region: "+llmtest.BedrockRegion+"}").Replace(anthropicSpec),
		env: func(t *testing.T, _ *llmtest.AnthropicServer) []string {
			t.Helper()
			none := filepath.Join(t.TempDir(), "none")
			return append(baseEnv(t), "AWS_BEARER_TOKEN_BEDROCK="+llmtest.BedrockAPIKey,
				"AWS_ACCESS_KEY_ID="+llmtest.BedrockAccessKeyID, "AWS_SECRET_ACCESS_KEY="+llmtest.BedrockSecretAccessKey,
				"AWS_CONFIG_FILE="+none, "AWS_SHARED_CREDENTIALS_FILE="+none, "AWS_EC2_METADATA_DISABLED=true")
		},
		secrets:    []string{llmtest.BedrockAPIKey, llmtest.BedrockSecretAccessKey},
		authorized: func(h http.Header) bool { return h.Get("Authorization") == "Bearer "+llmtest.BedrockAPIKey },
	}, {
		name: "vertex", server: llmtest.NewVertexServer, overloaded: overloaded,
		spec: strings.Replace(anthropicSpec, "provider: {wire: anthropic}",
			"provider: {platform: vertex, region: "+llmtest.VertexRegion+", project: "+llmtest.VertexProject+"}", 1),
		env: func(t *testing.T, srv *llmtest.AnthropicServer) []string {
			t.Helper()
			return append(baseEnv(t), "GOOGLE_APPLICATION_CREDENTIALS="+srv.VertexCredentials(t, t.TempDir()))
		},
		secrets:    []string{llmtest.VertexToken},
		authorized: func(h http.Header) bool { return h.Get("Authorization") == "Bearer "+llmtest.VertexToken },
	}}
}

// TestAnthropicWire drives the built binary over the anthropic wire on
// each platform: an overloaded reply retried, a 3-step tool session with
// thinking, cache reads priced, the session recorded and replayed from
// the cassette, and continued with --continue so the first continued
// request reads the cache; no credential reaches a file the run writes.
func TestAnthropicWire(t *testing.T) {
	t.Parallel()
	for _, pl := range claudePlatforms() {
		t.Run(pl.name, func(t *testing.T) {
			t.Parallel()
			testClaudeSession(t, pl)
		})
	}
}

func testClaudeSession(t *testing.T, pl claudePlatform) {
	t.Helper()
	_, repo := smallRepo(t)
	spec := writeSpec(t, pl.spec)
	srv := pl.server(t,
		llmtest.AnthropicStep{Raw: &pl.overloaded},
		anthropicStep(llmtest.AnthropicTurn{Thinking: "Write it in two goes.", Signature: "sig-1", ToolCalls: writeCall("half")}),
		anthropicStep(llmtest.AnthropicTurn{Text: "Now the real thing.", ToolCalls: writeCall("fixed")}),
		anthropicStep(llmtest.AnthropicTurn{Text: "status.txt says fixed."}),
	)
	out := filepath.Join(repo, ".runner", "runs", "first")
	cassette := filepath.Join(t.TempDir(), "session.jsonl")
	env := pl.env(t, srv)
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL(), "--record", cassette, "--quiet")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if r := srv.Rejections(); len(r) > 0 {
		t.Fatalf("the %s personality rejected: %v", pl.name, r)
	}
	steps := checkWireRun(t, out, "anthropic")
	if steps[2].Tokens.CacheRead == 0 || steps[2].CostUSD == nil {
		t.Errorf("step 3 tokens %+v cost %v: want cache reads, priced", steps[2].Tokens, steps[2].CostUSD)
	}
	reqs := srv.Requests()
	if !pl.authorized(reqs[0].Header) {
		t.Errorf("headers %v", reqs[0].Header)
	}
	if !strings.Contains(string(reqs[2].Raw), `"signature":"sig-1"`) {
		t.Errorf("the thinking block did not go back with its signature")
	}
	// The files the run writes exist, so the walk reads each of them.
	for _, f := range []string{outdir.EventsFile, outdir.ResultFile, outdir.SummaryFile, outdir.PatchFile, outdir.HistoryFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the run wrote no %s: %v", f, err)
		}
	}
	assertNoSecrets(t, pl.secrets, out, cassette)
	// Replay needs no credentials.
	checkReplay(t, spec, cassette, "--wire", "anthropic")

	// Continue: the first continued request starts with the earlier
	// request's bytes and reads them from the same cache.
	srv2 := pl.server(t, anthropicStep(llmtest.AnthropicTurn{Text: "Still fixed."}))
	srv2.Cache = srv.Cache
	// The server's lock, taken once after the write, orders it before
	// every request the runner process makes, as the race detector sees it.
	_ = srv2.Requests()
	second := filepath.Join(repo, ".runner", "runs", "second")
	res = runRunner(t, repo, pl.env(t, srv2), "exec", spec, "--out", second, "--base-url", srv2.URL(),
		"--continue", out, "--prompt", "Check it again.", "--quiet")
	if res.code != 0 {
		t.Fatalf("continue exit %d\n%s", res.code, res.stderr)
	}
	assertNoSecrets(t, pl.secrets, second)
	// Breakpoints move to the newest message; the rest is byte for byte.
	strip := func(b []byte) string {
		return strings.ReplaceAll(string(b), `,"cache_control":{"type":"ephemeral"}`, "")
	}
	checkContinuedPrefix(t, strip(reqs[len(reqs)-1].Raw), strip(srv2.Requests()[0].Raw))
	if u := srv2.Usages(); len(u) != 1 || u[0].CacheReadInputTokens == 0 {
		t.Errorf("continued usage %+v, want cache reads", u)
	}
}

// assertNoSecrets fails when a secret appears in a file under the paths.
func assertNoSecrets(t *testing.T, secrets []string, paths ...string) {
	t.Helper()
	for _, root := range paths {
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil //nolint:nilerr // a file gone is no leak
			}
			data, _ := os.ReadFile(path)
			for _, s := range secrets {
				if bytes.Contains(data, []byte(s)) {
					t.Errorf("%s holds the secret %q", path, s)
				}
			}
			return nil
		})
	}
}

// TestAnthropicWireIncomplete: on each platform, a reply cut by
// max_tokens ends its step with finish reason length, and the run goes on
// to finish the task.
func TestAnthropicWireIncomplete(t *testing.T) {
	t.Parallel()
	for _, pl := range claudePlatforms() {
		t.Run(pl.name, func(t *testing.T) {
			t.Parallel()
			_, repo := smallRepo(t)
			srv := pl.server(t,
				anthropicStep(llmtest.AnthropicTurn{Text: "I will now write a very long", StopReason: "max_tokens"}),
				anthropicStep(llmtest.AnthropicTurn{ToolCalls: writeCall("fixed")}),
				anthropicStep(llmtest.AnthropicTurn{Text: "Done."}),
			)
			out := t.TempDir()
			res := runRunner(t, repo, pl.env(t, srv), "exec", writeSpec(t, pl.spec), "--out", out, "--base-url", srv.URL(), "--quiet")
			steps := ofType[event.StepFinished](t, readEvents(t, filepath.Join(out, "events.jsonl")))
			if len(steps) == 0 || steps[0].FinishReason != "length" {
				t.Fatalf("steps %+v (exit %d)\n%s", steps, res.code, res.stderr)
			}
			t.Logf("exit %d after a max_tokens reply; steps %d", res.code, len(steps))
		})
	}
}

// TestClaudePlatformNeedsCredentials: Bedrock or Vertex with no
// credentials in the vendor's chain is refused before any model call
// (exit 2), and the message names the variables to set.
func TestClaudePlatformNeedsCredentials(t *testing.T) {
	t.Parallel()
	for _, pl := range claudePlatforms()[1:] {
		t.Run(pl.name, func(t *testing.T) {
			t.Parallel()
			_, repo := smallRepo(t)
			srv := pl.server(t)
			home, none := t.TempDir(), filepath.Join(t.TempDir(), "none")
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "NO_COLOR=1", "AWS_CONFIG_FILE=" + none,
				"AWS_SHARED_CREDENTIALS_FILE=" + none, "AWS_EC2_METADATA_DISABLED=true"}
			res := runRunner(t, repo, env, "exec", writeSpec(t, pl.spec), "--out", t.TempDir(), "--base-url", srv.URL(), "--quiet")
			want := map[string]string{"bedrock": "AWS_ACCESS_KEY_ID", "bedrock-key": "AWS_BEARER_TOKEN_BEDROCK",
				"vertex": "GOOGLE_APPLICATION_CREDENTIALS"}[pl.name]
			if res.code != 2 || !strings.Contains(res.stderr, want) || len(srv.Requests()) != 0 {
				t.Errorf("exit %d, %d model calls\n%s", res.code, len(srv.Requests()), res.stderr)
			}
		})
	}
}

// TestAnthropicWirePauseTurn: a pause_turn reply is sent back as it is,
// the last message of the next request with nothing after it (Anthropic's
// "Handling stop reasons"), and the run goes on to finish.
func TestAnthropicWirePauseTurn(t *testing.T) {
	t.Parallel()
	pl := claudePlatforms()[0]
	_, repo := smallRepo(t)
	srv := pl.server(t,
		anthropicStep(llmtest.AnthropicTurn{Thinking: "A long look first.", Signature: "sig-paused", Text: "Looking at status.txt.", StopReason: "pause_turn"}),
		anthropicStep(llmtest.AnthropicTurn{ToolCalls: writeCall("fixed")}),
		anthropicStep(llmtest.AnthropicTurn{Text: "Done."}),
	)
	out := t.TempDir()
	res := runRunner(t, repo, pl.env(t, srv), "exec", writeSpec(t, pl.spec), "--out", out, "--base-url", srv.URL(), "--quiet")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if r := srv.Rejections(); len(r) > 0 {
		t.Fatalf("rejected: %v", r)
	}
	steps := ofType[event.StepFinished](t, readEvents(t, filepath.Join(out, "events.jsonl")))
	if len(steps) != 3 || steps[0].FinishReason != "paused" {
		t.Fatalf("steps %+v", steps)
	}
	msgs := srv.Requests()[1].Messages()
	last := msgs[len(msgs)-1]
	raw, _ := json.Marshal(last["content"])
	if last["role"] != "assistant" || !strings.Contains(string(raw), `"signature":"sig-paused"`) ||
		!strings.Contains(string(raw), "Looking at status.txt.") || len(msgs) != len(srv.Requests()[0].Messages())+1 {
		t.Errorf("the paused turn did not go back as the last message: %d messages, last %s %s", len(msgs), last["role"], raw)
	}
}

// TestAnthropicWireContinueRedactedThinking: a thinking block that held a
// secret is redacted in history.jsonl, which breaks its signature; on
// --continue it is left out rather than sent with a signature that no
// longer matches (the fake checks signatures as the API does), so the
// continued run is accepted, and the secret is in no file.
func TestAnthropicWireContinueRedactedThinking(t *testing.T) {
	t.Parallel()
	pl := claudePlatforms()[0]
	_, repo := smallRepo(t)
	const key = "sk-ant-test-0123456789"
	srv := pl.server(t,
		anthropicStep(llmtest.AnthropicTurn{Thinking: "The key " + key + " is in the env; ignore it.", ToolCalls: writeCall("fixed")}),
		anthropicStep(llmtest.AnthropicTurn{Thinking: "Done, nothing secret here.", Text: "Fixed."}),
	)
	spec := writeSpec(t, pl.spec)
	out := filepath.Join(repo, ".runner", "runs", "first")
	if res := runRunner(t, repo, pl.env(t, srv), "exec", spec, "--out", out, "--base-url", srv.URL(), "--quiet"); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	assertNoSecrets(t, []string{key}, out)
	srv2 := pl.server(t, anthropicStep(llmtest.AnthropicTurn{Text: "Still fixed."}))
	res := runRunner(t, repo, pl.env(t, srv2), "exec", spec, "--out", filepath.Join(repo, ".runner", "runs", "second"),
		"--base-url", srv2.URL(), "--continue", out, "--prompt", "Check it again.", "--quiet")
	if res.code != 0 || len(srv2.Rejections()) > 0 {
		t.Fatalf("continue exit %d, rejections %v\n%s", res.code, srv2.Rejections(), res.stderr)
	}
	body := string(srv2.Requests()[0].Raw)
	if strings.Contains(body, "[REDACTED]") || !strings.Contains(body, `"thinking":"Done, nothing secret here."`) {
		t.Errorf("continued request: the redacted thinking went back, or the intact one did not:\n%s", body[strings.Index(body, `"messages"`):])
	}
}
