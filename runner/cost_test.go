package runner

import (
	"encoding/json"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestCostRounded: a price with float noise is emitted rounded to a
// nano-dollar, per step and in total, and stays a JSON number.
func TestCostRounded(t *testing.T) {
	t.Parallel()
	step := func(id string) script {
		return sc(call(id, "read", `{"path":"`+id+`"}`), finish(llm.FinishToolCalls, 1000, 100))
	}
	m := newModel(step("a"), step("b"), step("c"), step("d"))
	sink := &recSink{}
	cfg := testConfig(m, sink, &fakeTool{name: "read"})
	cfg.Pricer = fixedPricer{perCall: ptr(0.00006720000000000001)} // 0.0000672 with noise
	cfg.Limits = Limits{MaxSteps: 3}
	res := runTest(t, cfg)
	if res.CostUSD == nil {
		t.Fatalf("no cost: %+v", res)
	}
	if got, _ := json.Marshal(*res.CostUSD); string(got) != "0.0002016" {
		t.Errorf("total cost %s, want 0.0002016", got)
	}
	steps := sink.of("step.finished")
	if len(steps) == 0 {
		t.Fatal("no step.finished")
	}
	for _, p := range steps {
		sf := p.(event.StepFinished)
		if got, _ := json.Marshal(sf.CostUSD); string(got) != "0.0000672" {
			t.Errorf("step %d cost %s, want 0.0000672", sf.Step, got)
		}
	}
}

func TestRoundUSD(t *testing.T) {
	for in, want := range map[float64]float64{
		0.00035360000000000003: 0.0003536, 0.1 + 0.2: 0.3, 0: 0, 1.5: 1.5, 0.0000000004: 0, 0.0000000006: 0.000000001,
	} {
		if got := roundUSD(in); got != want {
			t.Errorf("roundUSD(%v) = %v, want %v", in, got, want)
		}
	}
}
