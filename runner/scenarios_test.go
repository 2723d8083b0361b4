package runner

import (
	"bytes"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// TestScenariosThroughLLMTest runs the scripted sessions through
// the real provider against llmtest, with the real built-in tools behind
// the permission guard, and checks each ends as it should with a valid
// event log (closed by the run.finished record the pipeline writes).
func TestScenariosThroughLLMTest(t *testing.T) {
	t.Parallel()
	root := makeRepo(t, 40)
	rules := permission.Ruleset{{Permission: permission.Read, Pattern: "*", Action: permission.Allow}}
	read := func(p string) llmtest.Reply { return llmtest.ToolCalls(llmtest.Call("read", `{"path":"`+p+`"}`)) }
	for _, tc := range []struct {
		name    string
		replies []llmtest.Reply
		setup   func(*Config)
		status  event.Status
		check   func(t *testing.T, res Result, sink *recSink)
	}{
		{name: "stop with tool calls", replies: []llmtest.Reply{
			llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.Call("read", `{"path":"pkg00/file0000.go"}`)}, FinishReason: "stop"}.Reply(),
			llmtest.Text("done"),
		}, status: event.StatusSuccess, check: func(t *testing.T, res Result, sink *recSink) {
			t.Helper()
			if len(sink.of("tool.completed")) != 1 || res.Steps != 2 {
				t.Errorf("the call did not run: %v", sink.types())
			}
		}},
		{name: "doom loop", replies: []llmtest.Reply{
			read("pkg00/file0000.go"), read("pkg00/file0000.go"), read("pkg00/file0000.go"), llmtest.Text("stuck"),
		}, status: event.StatusSuccess, check: func(t *testing.T, res Result, sink *recSink) {
			t.Helper()
			d := sink.of("permission.denied")
			if len(d) != 1 || d[0].(event.PermissionDenied).Permission != permission.DoomLoop {
				t.Errorf("denials %+v", d)
			}
		}},
		{name: "max steps", replies: []llmtest.Reply{read("pkg00/file0000.go"), read("pkg01/file0001.go")},
			setup: func(c *Config) { c.Limits.MaxSteps = 2 }, status: event.StatusMaxSteps},
		{name: "budget", replies: []llmtest.Reply{read("pkg00/file0000.go"), read("pkg01/file0001.go")},
			setup:  func(c *Config) { c.Pricer, c.Limits.MaxCostUSD = fixedPricer{perCall: ptr(0.6)}, 1 },
			status: event.StatusBudgetExceeded},
		{name: "max denials", replies: []llmtest.Reply{
			llmtest.ToolCalls(llmtest.Call("bash", `{"command":"rm -rf a"}`)),
			llmtest.ToolCalls(llmtest.Call("write", `{"path":"x.go","content":"x"}`)),
		}, setup: func(c *Config) { c.Limits.MaxDenials = 2 }, status: event.StatusBlocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, tc.replies...)
			sink := &recSink{}
			var log bytes.Buffer
			w := event.NewWriter(&log, "run-1")
			cfg := testConfig(providerFor(t, srv), event.Multi(sink, w),
				tools.GuardAll(tools.Builtins(tools.Env{WorkTree: root}), rules, root)...)
			cfg.WorkTree, cfg.Policy = root, rules
			if tc.setup != nil {
				tc.setup(&cfg)
			}
			res := runTest(t, cfg)
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s: %+v", res.Status, tc.status, res)
			}
			if tc.check != nil {
				tc.check(t, res, sink)
			}
			finishLog(t, w, &log, res)
		})
	}
}

// finishLog writes the run.finished record from a Result, as the pipeline
// does, and validates the whole log.
func finishLog(t *testing.T, w *event.Writer, log *bytes.Buffer, res Result) {
	t.Helper()
	if err := w.Emit(event.RunFinished{Status: res.Status, FinalMessage: res.FinalMessage,
		StructuredOutput: res.StructuredOutput, Steps: res.Steps, Tokens: res.Tokens, CostUSD: res.CostUSD,
		Error: res.RunError()}); err != nil {
		t.Fatal(err)
	}
	v, err := event.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.ValidateLog(log.Bytes()); err != nil {
		t.Errorf("event log: %v\n%s", err, log.String())
	}
}
