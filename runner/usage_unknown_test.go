package runner

import (
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
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
