package runner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
)

func TestCompaction(t *testing.T) {
	t.Parallel()
	summary := sc(text("SUMMARY: read a.go, bug on line 3"), finish(llm.FinishStop, 50, 20))
	t.Run("overflow error", func(t *testing.T) {
		t.Parallel()
		m := newModel(sc(fail(llm.ClassContextOverflow, 0)), summary, sc(text("fixed"), finish(llm.FinishStop, 10, 1)))
		sink := &recSink{}
		res := runTest(t, testConfig(m, sink))
		if res.Status != event.StatusSuccess || res.Compactions != 1 || res.Steps != 1 || res.Tokens.Input != 60 {
			t.Fatalf("result %+v", res)
		}
		want := []string{"step.started", "compaction", "text", "step.finished"}
		if diff := cmp.Diff(want, sink.types()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		c := sink.of("compaction")[0].(event.Compaction)
		if c.Reason != "overflow" || c.Step != 1 {
			t.Errorf("compaction = %+v", c)
		}
		reqs := m.reqs()
		if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Content != compactionPrompt {
			t.Errorf("summary request ends with %q", last.Content)
		}
		after := reqs[2].Messages
		if len(after) != 2 || !strings.HasPrefix(after[1].Content, "Fix the bug.") ||
			!strings.Contains(after[1].Content, "SUMMARY: read a.go") {
			t.Errorf("history after compaction = %+v", after)
		}
	})
	t.Run("usage near the window", func(t *testing.T) {
		t.Parallel()
		m := newModel(
			sc(call("c1", "read", `{}`), finish(llm.FinishToolCalls, 900, 50)),
			summary,
			sc(text("fixed"), finish(llm.FinishStop, 10, 1)),
		)
		sink := &recSink{}
		cfg := testConfig(m, sink, &fakeTool{name: "read"})
		cfg.Windows = fixedPricer{window: 1000}
		res := runTest(t, cfg)
		if res.Status != event.StatusSuccess || res.Compactions != 1 || res.Steps != 2 {
			t.Fatalf("result %+v", res)
		}
		c := sink.of("compaction")[0].(event.Compaction)
		if c.Reason != "usage" || c.Step != 2 || c.TokensBefore != 950 {
			t.Errorf("compaction = %+v", c)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		var scripts []script
		for range 3 {
			scripts = append(scripts, sc(fail(llm.ClassContextOverflow, 0)), summary)
		}
		cfg := testConfig(newModel(scripts...), &recSink{})
		cfg.MaxCompactions = 2
		res := runTest(t, cfg)
		if res.Status != event.StatusError || res.Compactions != 2 || res.RunError().Class != "context-overflow" {
			t.Fatalf("result %+v", res)
		}
	})
}

func TestCompactionTrimsToolOutputsWhenTheSummaryOverflows(t *testing.T) {
	t.Parallel()
	m := newModel(
		sc(call("c1", "read", `{}`), finish(llm.FinishToolCalls, 10, 1)),
		sc(fail(llm.ClassContextOverflow, 0)), // step 2
		sc(fail(llm.ClassContextOverflow, 0)), // summary request
		sc(text("summary"), finish(llm.FinishStop, 10, 1)),
		sc(text("done"), finish(llm.FinishStop, 10, 1)),
	)
	res := runTest(t, testConfig(m, &recSink{}, &fakeTool{name: "read"}))
	if res.Status != event.StatusSuccess || res.Compactions != 1 {
		t.Fatalf("result %+v", res)
	}
	trimmed := m.reqs()[3].Messages
	for _, msg := range trimmed {
		if msg.Role == llm.RoleTool && msg.Content != omittedOutput {
			t.Errorf("tool output kept in the trimmed summary request: %q", msg.Content)
		}
	}
}

func TestLastStepNoteSurvivesCompaction(t *testing.T) {
	t.Parallel()
	m := newModel(
		sc(call("c1", "read", `{}`), finish(llm.FinishToolCalls, 10, 1)),
		sc(fail(llm.ClassContextOverflow, 0)),
		sc(text("summary"), finish(llm.FinishStop, 10, 1)),
		sc(text("final words"), finish(llm.FinishStop, 10, 1)),
	)
	cfg := testConfig(m, &recSink{}, &fakeTool{name: "read"})
	cfg.Limits.MaxSteps = 2
	res := runTest(t, cfg)
	if res.Status != event.StatusSuccess || res.FinalMessage != "final words" {
		t.Fatalf("result %+v", res)
	}
	msgs := m.reqs()[3].Messages
	if last := msgs[len(msgs)-1]; last.Content != lastStepNote || m.reqs()[3].ToolChoice != llm.ToolChoiceNone {
		t.Errorf("after compaction the last step lost its note: %+v", msgs)
	}
}
