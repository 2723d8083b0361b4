package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
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

// TestAnthropicWire drives the built binary over the anthropic wire: a
// 529 retried, a 3-step tool session with thinking, cache reads priced,
// the session recorded and replayed from the cassette, and continued
// with --continue so the first continued request reads the cache.
func TestAnthropicWire(t *testing.T) {
	t.Parallel()
	_, repo := smallRepo(t)
	spec := filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(anthropicSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	overloaded := llmtest.AnthropicOverloaded()
	overloaded.Header["retry-after"] = "0"
	srv := llmtest.NewAnthropicServer(t,
		llmtest.AnthropicStep{Raw: &overloaded},
		anthropicStep(llmtest.AnthropicTurn{Thinking: "Write it in two goes.", Signature: "sig-1", ToolCalls: writeCall("half")}),
		anthropicStep(llmtest.AnthropicTurn{Text: "Now the real thing.", ToolCalls: writeCall("fixed")}),
		anthropicStep(llmtest.AnthropicTurn{Text: "status.txt says fixed."}),
	)
	out := filepath.Join(repo, ".runner", "runs", "first")
	cassette := filepath.Join(t.TempDir(), "session.jsonl")
	env := append(baseEnv(t), "ANTHROPIC_API_KEY=sk-ant-test-0123456789")
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL(), "--record", cassette, "--quiet")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if r := srv.Rejections(); len(r) > 0 {
		t.Fatalf("the Messages personality rejected: %v", r)
	}
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))
	var rs event.RunStarted
	if err := recs[0].Decode(&rs); err != nil || rs.Wire != "anthropic" {
		t.Errorf("run.started wire %q (%v)", rs.Wire, err)
	}
	if n := len(ofType[event.Retry](t, recs)); n != 1 {
		t.Errorf("%d retry events, want 1 (the 529)", n)
	}
	steps := ofType[event.StepFinished](t, recs)
	if len(steps) != 3 || steps[0].FinishReason != "tool-calls" || steps[2].FinishReason != "stop" {
		t.Fatalf("steps %+v", steps)
	}
	if steps[2].Tokens.CacheRead == 0 || steps[2].CostUSD == nil {
		t.Errorf("step 3 tokens %+v cost %v: want cache reads, priced", steps[2].Tokens, steps[2].CostUSD)
	}
	reqs := srv.Requests()
	if h := reqs[0].Header; h.Get("x-api-key") != "sk-ant-test-0123456789" || h.Get("anthropic-version") == "" {
		t.Errorf("headers %v", h)
	}
	if !strings.Contains(string(reqs[2].Raw), `"signature":"sig-1"`) {
		t.Errorf("the thinking block did not go back with its signature")
	}
	patch, err := os.ReadFile(filepath.Join(out, "changes.patch"))
	if err != nil || !bytes.Contains(patch, []byte("+fixed")) {
		t.Fatalf("patch (%v):\n%s", err, patch)
	}

	// Replay: the same session from the cassette, no endpoint contacted.
	_, repo2 := smallRepo(t)
	out2 := t.TempDir()
	res = runRunner(t, repo2, baseEnv(t), "exec", spec, "--out", out2, "--replay", cassette, "--wire", "anthropic", "--quiet")
	if res.code != 0 {
		t.Fatalf("replay exit %d\n%s", res.code, res.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(repo2, "status.txt")); string(got) != "fixed\n" {
		t.Errorf("replayed status.txt %q", got)
	}

	// Continue: the first continued request starts with the earlier
	// request's bytes and reads them from the same cache.
	srv2 := llmtest.NewAnthropicServer(t, anthropicStep(llmtest.AnthropicTurn{Text: "Still fixed."}))
	srv2.Cache = srv.Cache
	// The server's lock, taken once after the write, orders it before
	// every request the runner process makes, as the race detector sees it.
	_ = srv2.Requests()
	res = runRunner(t, repo, env, "exec", spec, "--out", filepath.Join(repo, ".runner", "runs", "second"), "--base-url", srv2.URL(),
		"--continue", out, "--prompt", "Check it again.", "--quiet")
	if res.code != 0 {
		t.Fatalf("continue exit %d\n%s", res.code, res.stderr)
	}
	// Breakpoints move to the newest message; the rest is byte for byte.
	strip := func(b []byte) string {
		return strings.ReplaceAll(string(b), `,"cache_control":{"type":"ephemeral"}`, "")
	}
	last := strings.TrimSuffix(strip(reqs[len(reqs)-1].Raw), "]}")
	if cont := strip(srv2.Requests()[0].Raw); !strings.HasPrefix(cont, last) {
		t.Errorf("the continued request does not start with the earlier request's bytes")
	}
	if u := srv2.Usages(); len(u) != 1 || u[0].CacheReadInputTokens == 0 {
		t.Errorf("continued usage %+v, want cache reads", u)
	}
}

// TestAnthropicWireIncomplete: a reply cut by max_tokens ends its step
// with finish reason length, and the run does not count it as done.
func TestAnthropicWireIncomplete(t *testing.T) {
	t.Parallel()
	_, repo := smallRepo(t)
	spec := filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(spec, []byte(anthropicSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewAnthropicServer(t,
		anthropicStep(llmtest.AnthropicTurn{Text: "I will now write a very long", StopReason: "max_tokens"}),
		anthropicStep(llmtest.AnthropicTurn{ToolCalls: writeCall("fixed")}),
		anthropicStep(llmtest.AnthropicTurn{Text: "Done."}),
	)
	out := t.TempDir()
	env := append(baseEnv(t), "ANTHROPIC_API_KEY=sk-ant-test-0123456789")
	res := runRunner(t, repo, env, "exec", spec, "--out", out, "--base-url", srv.URL(), "--quiet")
	recs := readEvents(t, filepath.Join(out, "events.jsonl"))
	steps := ofType[event.StepFinished](t, recs)
	if len(steps) == 0 || steps[0].FinishReason != "length" {
		t.Fatalf("steps %+v (exit %d)\n%s", steps, res.code, res.stderr)
	}
	t.Logf("exit %d after a max_tokens reply; steps %d", res.code, len(steps))
}
