package runner

import (
	"context"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// TestStepWithoutUsage: a step whose provider reported no usage (llm's
// finish-step with a nil Usage: a stream cut after the finish chunk, a
// server that sends none) has unknown tokens and cost, not 0: the
// step.finished event says so and the run's cost is unknown.
func TestStepWithoutUsage(t *testing.T) {
	t.Parallel()
	noUsage := []llm.Event{{Type: llm.EventFinishStep, FinishReason: llm.FinishToolCalls}}
	sink := &recSink{}
	cfg := testConfig(newModel(sc(call("c1", "read", `{}`), noUsage), sc(text("done"), finish(llm.FinishStop, 10, 2))),
		sink, &fakeTool{name: "read"})
	cfg.Pricer = fixedPricer{perCall: ptr(0.01)}
	res := runTest(t, cfg)
	if res.Status != event.StatusSuccess || res.CostUSD != nil {
		t.Fatalf("result %+v: the run's cost must be unknown", res)
	}
	steps := sink.of("step.finished")
	first, second := steps[0].(event.StepFinished), steps[1].(event.StepFinished)
	if !first.TokensUnknown || first.CostUSD != nil {
		t.Errorf("step 1 without usage: %+v", first)
	}
	if second.TokensUnknown || second.CostUSD == nil || second.Tokens.Input != 10 {
		t.Errorf("step 2 with usage: %+v", second)
	}
}

// TestFailedAttemptsUsage: what a failed attempt used is counted (a cancel
// while a tool call runs keeps the usage the stream brought meanwhile: the
// stream is read ahead), and where the provider billed output the runner
// never got the usage of (a cancel before the usage came; a stream cut
// mid-reply), the tokens and the run's cost are unknown, never a silent 0.
// An attempt refused before any output (429) used nothing.
func TestFailedAttemptsUsage(t *testing.T) {
	t.Parallel()
	usageThenError := append(append(text("partial"), finish(llm.FinishStop, 100, 10)...), fail(llm.ClassFatal, 0)...)
	tests := []struct {
		name        string
		scripts     []script
		cancelInRun bool
		status      event.Status
		costKnown   bool
		inputTokens int64
		stepUnknown bool // the first step.finished says tokens_unknown
	}{
		{"cancel during a tool call, the usage already sent", []script{sc(call("c1", "slow", `{}`), finish(llm.FinishToolCalls, 100, 10))},
			true, event.StatusCancelled, true, 100, false},
		{"cancel during a tool call before the usage came", []script{{fn: func(ctx context.Context, yield func(llm.Event) bool) {
			for _, ev := range reply(call("c1", "slow", `{}`)) {
				yield(ev)
			}
			<-ctx.Done() // the usage would follow: it never comes
		}}}, true, event.StatusCancelled, false, 0, true},
		{"usage then a provider error", []script{{events: usageThenError}},
			false, event.StatusError, true, 100, false},
		{"429 before any output, then success", []script{sc(fail(llm.ClassRetryable, 0)), sc(text("done"), finish(llm.FinishStop, 7, 1))},
			false, event.StatusSuccess, true, 7, false},
		{"stream cut mid-reply, then success", []script{{events: text("half a rep")}, sc(text("done"), finish(llm.FinishStop, 7, 1))},
			false, event.StatusSuccess, false, 7, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			slow := &fakeTool{name: "slow", run: func(ctx context.Context, _ tools.Call) (tools.Result, error) {
				if tt.cancelInRun {
					cancel()
				}
				<-ctx.Done()
				return tools.Result{}, ctx.Err()
			}}
			sink := &recSink{}
			cfg := testConfig(newModel(tt.scripts...), sink, slow)
			cfg.Pricer = fixedPricer{perCall: ptr(0.01)}
			res, err := Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.status || (res.CostUSD != nil) != tt.costKnown || res.Tokens.Input != tt.inputTokens {
				t.Fatalf("result %+v (cost %v): want status %s, cost known %v, input tokens %d",
					res, res.CostUSD, tt.status, tt.costKnown, tt.inputTokens)
			}
			steps := sink.of("step.finished")
			if len(steps) == 0 {
				t.Fatal("no step.finished")
			}
			first := steps[0].(event.StepFinished)
			if first.TokensUnknown != tt.stepUnknown || (tt.stepUnknown && first.CostUSD != nil) {
				t.Errorf("first step.finished %+v: want tokens_unknown %v", first, tt.stepUnknown)
			}
			if !tt.stepUnknown && tt.inputTokens > 0 && first.Tokens.Input != tt.inputTokens {
				t.Errorf("first step.finished tokens %+v, want input %d", first.Tokens, tt.inputTokens)
			}
		})
	}
}
