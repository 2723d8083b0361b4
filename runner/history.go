package runner

import (
	"github.com/seed43ef5acb/runner/llm"
)

// HistoryKind names a HistoryRecord.
type HistoryKind string

// History record kinds.
const (
	// HistorySystem carries the system prompt, once, when Run starts.
	HistorySystem HistoryKind = "system"
	// HistoryMessages carries wire messages appended to the history, in
	// order: the user prompt, each committed step (the assistant message
	// followed by its tool results), notes the runner added, check feedback.
	HistoryMessages HistoryKind = "messages"
	// HistoryReset says a compaction replaced the history: the messages
	// recorded after it are the whole new history.
	HistoryReset HistoryKind = "reset"
)

// HistoryRecord is one change to the conversation as the model sees it
// (the wire history, not the event log's view). Step is the step the
// change belongs to (0 before the first step).
type HistoryRecord struct {
	Kind     HistoryKind   `json:"kind"`
	Step     int           `json:"step"`
	System   string        `json:"system,omitempty"`
	Messages []llm.Message `json:"messages,omitempty"`
	Reason   string        `json:"reason,omitempty"`
}

// History keeps the conversation a session sends the model, so a finished
// (or killed) run can be continued. The session calls Record from its own
// goroutine, in order, as the history changes: a step's messages are
// recorded once the step is committed, so a history cut by a kill ends
// after the last complete step. An error is logged once and the run goes
// on (the history is a record, not a reason to stop working).
type History interface {
	Record(HistoryRecord) error
}

// Transcript is a conversation to continue: the system prompt and the wire
// messages after it, as a History recorded them (see ReplayHistory).
type Transcript struct {
	System   string
	Messages []llm.Message
	// Steps is the highest step number recorded (informational: a
	// continued session numbers its own steps from 1).
	Steps int
}

// ReplayHistory folds history records into the conversation they describe:
// the last system prompt, and the messages recorded after the last reset.
func ReplayHistory(recs []HistoryRecord) Transcript {
	var t Transcript
	for _, r := range recs {
		switch r.Kind {
		case HistorySystem:
			t.System = r.System
		case HistoryReset:
			t.Messages = nil
		case HistoryMessages:
			t.Messages = append(t.Messages, r.Messages...)
		}
		t.Steps = max(t.Steps, r.Step)
	}
	return t
}

// recordHistory sends a history record; a failure is logged once.
func (s *Session) recordHistory(rec HistoryRecord) {
	if s.cfg.History == nil {
		return
	}
	if err := s.cfg.History.Record(rec); err != nil && !s.historyErr {
		s.historyErr = true
		s.cfg.Logger.Warn("history failed; continuing", "err", err)
	}
}
