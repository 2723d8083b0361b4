package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/golden"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
)

// helloWireCalls are the hello demo's tool calls (helloTurns), by step.
func helloWireCalls() [][]llmtest.ToolCall {
	return [][]llmtest.ToolCall{
		{{ID: "call_read", Name: "read", Arguments: `{"path":"greet.go"}`}},
		{{ID: "call_edit", Name: "edit", Arguments: `{"path":"greet.go","old_string":"\tif name != \"\" {","new_string":"\tif name == \"\" {"}`}},
		{{ID: "call_test", Name: "bash", Arguments: `{"command":"go test ./...","description":"Run the tests"}`}},
		nil,
	}
}

const helloWireAnswer = "Greeting replaced every non-blank name with \"world\" because its condition was inverted; it now falls back to \"world\" only for blank names, and the tests pass."

// wireExample is one bundled example of a wire: its directory under
// examples/ and a fake that plays the hello demo over that wire.
type wireExample struct {
	dir   string
	key   string // the variable of the wire's key
	start func(t *testing.T) (url string, rejections func() []string)
}

func wireExamples() []wireExample {
	return []wireExample{
		{dir: "anthropic", key: "ANTHROPIC_API_KEY", start: func(t *testing.T) (string, func() []string) {
			t.Helper()
			srv := llmtest.NewAnthropicServer(t, helloScript(func(calls []llmtest.ToolCall, reasoning, text string) llmtest.AnthropicStep {
				turn := llmtest.AnthropicTurn{ToolCalls: calls, Thinking: reasoning, Text: text}
				if reasoning != "" {
					turn.Signature = "EqQBCgIYAhIMexamplesig"
				}
				return llmtest.AnthropicStep{Turn: turn}
			})...)
			return srv.URL(), srv.Rejections
		}},
		{dir: "responses", key: "OPENAI_API_KEY", start: func(t *testing.T) (string, func() []string) {
			t.Helper()
			srv := llmtest.NewResponsesServer(t, helloScript(func(calls []llmtest.ToolCall, reasoning, text string) llmtest.ResponsesStep {
				turn := llmtest.ResponsesTurn{ToolCalls: calls, Reasoning: reasoning, Text: text}
				if reasoning != "" {
					turn.EncryptedContent = "gAAAAB-example-encrypted"
				}
				return llmtest.ResponsesStep{Turn: turn}
			})...)
			return srv.URL(), srv.Rejections
		}},
	}
}

// helloScript is the hello demo over one wire: step makes the wire's step
// from a step's calls, the first step's reasoning and the last's answer.
func helloScript[S any](step func(calls []llmtest.ToolCall, reasoning, text string) S) []S {
	var out []S
	for i, c := range helloWireCalls() {
		reasoning, text := "", ""
		switch i {
		case 0:
			reasoning = "The greeting test fails; read greet.go."
		case 3:
			text = helloWireAnswer
		}
		out = append(out, step(c, reasoning, text))
	}
	return out
}

// TestWireExamples replays each wire's bundled example offline (no key,
// no network) and finds the fix; with -update it records the cassette
// first from the wire's fake, as --record writes it.
func TestWireExamples(t *testing.T) {
	for _, ex := range wireExamples() {
		t.Run(ex.dir, func(t *testing.T) {
			task := filepath.Join("examples", ex.dir, "task.yaml")
			cassette := filepath.Join("examples", ex.dir, "session.jsonl")
			if golden.Update() {
				url, rejections := ex.start(t)
				env := append(baseEnv(t), ex.key+"=sk-scripted-not-a-real-key")
				res := runRunner(t, repoRoot, env, "exec", task, "--repo", "examples/hello/project", "--isolate",
					"--record", filepath.Join(repoRoot, cassette), "--base-url", url, "--out", t.TempDir())
				if res.code != 0 || len(rejections()) > 0 {
					t.Fatalf("record: exit %d, rejections %v\n%s", res.code, rejections(), res.stderr)
				}
			}
			cwd := t.TempDir()
			for _, p := range []string{task, cassette} {
				copyFileT(t, filepath.Join(repoRoot, p), filepath.Join(cwd, p))
			}
			copyDirT(t, filepath.Join(repoRoot, "examples/hello/project"), filepath.Join(cwd, "examples/hello/project"))
			data, _ := os.ReadFile(filepath.Join(cwd, cassette))
			if strings.Contains(string(data), "sk-scripted") {
				t.Error("the cassette holds the API key")
			}
			out := t.TempDir()
			res := runRunner(t, cwd, baseEnv(t), "exec", task, "--repo", "examples/hello/project", "--isolate", "--replay", cassette, "--out", out)
			if res.code != 0 {
				t.Fatalf("replay exit %d\n%s", res.code, res.stderr)
			}
			recs := readEvents(t, filepath.Join(out, "events.jsonl"))
			if rs := ofType[event.RunStarted](t, recs); len(rs) != 1 || rs[0].Wire != ex.dir {
				t.Errorf("run.started %+v, want wire %s", rs, ex.dir)
			}
			patch, err := os.ReadFile(filepath.Join(out, "changes.patch"))
			if err != nil || !strings.Contains(string(patch), "+\tif name == \"\" {") {
				t.Errorf("patch (%v) does not hold the fix:\n%s", err, patch)
			}
		})
	}
}
