package runner

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
)

// memHistory keeps history records, round-tripped through JSON as a
// history file would store them.
type memHistory struct {
	mu   sync.Mutex
	recs []HistoryRecord
}

func (h *memHistory) Record(r HistoryRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var back HistoryRecord
	if err := json.Unmarshal(b, &back); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, back)
	return nil
}

func (h *memHistory) records() []HistoryRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]HistoryRecord(nil), h.recs...)
}

// TestHistoryRecordsWhatTheModelSaw: replaying the records of a run gives
// the system prompt and messages of the run's last request, plus the final
// reply.
func TestHistoryRecordsWhatTheModelSaw(t *testing.T) {
	t.Parallel()
	read := &fakeTool{name: "read"}
	m := newModel(
		sc(reasoning("look"), text("Reading."), call("c1", "read", `{"path":"a.go"}`), finish(llm.FinishToolCalls, 100, 10)),
		sc(text("Done with a.go."), finish(llm.FinishStop, 200, 10)),
	)
	h := &memHistory{}
	cfg := testConfig(m, &recSink{}, read)
	cfg.History = h
	res := runTest(t, cfg)
	if res.Status != event.StatusSuccess {
		t.Fatalf("status %s", res.Status)
	}
	tr := ReplayHistory(h.records())
	reqs := m.reqs()
	last := reqs[len(reqs)-1]
	if tr.System != last.Messages[0].Content {
		t.Errorf("system prompt differs from the one sent")
	}
	want := append(append([]llm.Message(nil), last.Messages[1:]...), llm.Message{Role: llm.RoleAssistant, Content: "Done with a.go."})
	if diff := cmp.Diff(want, tr.Messages); diff != "" {
		t.Errorf("history (-last request +recorded):\n%s", diff)
	}
	if tr.Steps != 2 {
		t.Errorf("steps = %d, want 2", tr.Steps)
	}
}

// TestResumeSharesThePrefix: a session resumed from a history sends, as
// its first request, the previous run's last request byte for byte, then
// the final reply and the new prompt (so the provider's prompt cache
// holds), even when the clock, and so the date in a fresh system prompt,
// changed.
func TestResumeSharesThePrefix(t *testing.T) {
	t.Parallel()
	read := &fakeTool{name: "read"}
	m1 := newModel(
		sc(call("c1", "read", `{"path":"a.go"}`), finish(llm.FinishToolCalls, 100, 10)),
		sc(text("First part done."), finish(llm.FinishStop, 200, 10)),
	)
	h1 := &memHistory{}
	cfg := testConfig(m1, &recSink{}, read)
	cfg.History = h1
	runTest(t, cfg)

	tr := ReplayHistory(h1.records())
	m2 := newModel(sc(text("Second part done."), finish(llm.FinishStop, 300, 10)))
	h2 := &memHistory{}
	cfg2 := testConfig(m2, &recSink{}, read)
	cfg2.Prompt = "Also handle the empty list."
	cfg2.Now = func() time.Time { return time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC) }
	cfg2.Resume = &tr
	cfg2.History = h2
	res := runTest(t, cfg2)
	if res.Status != event.StatusSuccess || res.FinalMessage != "Second part done." {
		t.Fatalf("result = %+v", res)
	}
	prev := m1.reqs()[len(m1.reqs())-1]
	first := m2.reqs()[0]
	if len(first.Messages) != len(prev.Messages)+2 {
		t.Fatalf("continued request has %d messages, want %d", len(first.Messages), len(prev.Messages)+2)
	}
	for i := range prev.Messages {
		a, _ := json.Marshal(prev.Messages[i])
		b, _ := json.Marshal(first.Messages[i])
		if string(a) != string(b) {
			t.Fatalf("message %d differs:\n%s\n%s", i, a, b)
		}
	}
	a, _ := json.Marshal(prev.Tools)
	b, _ := json.Marshal(first.Tools)
	if string(a) != string(b) {
		t.Errorf("tools differ between the runs")
	}
	if got := first.Messages[len(first.Messages)-1]; got.Role != llm.RoleUser || got.Content != "Also handle the empty list." {
		t.Errorf("last message = %+v", got)
	}
	// The continued run's history is self-contained: old and new together.
	tr2 := ReplayHistory(h2.records())
	if len(tr2.Messages) != len(first.Messages)-1+1 || tr2.System != tr.System {
		t.Errorf("continued history has %d messages (system equal: %v)", len(tr2.Messages), tr2.System == tr.System)
	}
}

// TestHistoryResetOnCompaction: after a compaction the replayed history is
// the compacted one, not the messages it replaced.
func TestHistoryResetOnCompaction(t *testing.T) {
	t.Parallel()
	read := &fakeTool{name: "read"}
	m := newModel(
		sc(call("c1", "read", `{"path":"a.go"}`), finish(llm.FinishToolCalls, 100, 10)),
		sc(fail(llm.ClassContextOverflow, 0)),
		sc(text("summary of the work"), finish(llm.FinishStop, 50, 10)),
		sc(text("Done."), finish(llm.FinishStop, 60, 10)),
	)
	h := &memHistory{}
	cfg := testConfig(m, &recSink{}, read)
	cfg.History = h
	res := runTest(t, cfg)
	if res.Compactions != 1 {
		t.Fatalf("compactions = %d (status %s)", res.Compactions, res.Status)
	}
	tr := ReplayHistory(h.records())
	if len(tr.Messages) != 2 || tr.Messages[0].Role != llm.RoleUser || tr.Messages[1].Content != "Done." {
		t.Fatalf("replayed history after compaction = %+v", tr.Messages)
	}
}
