package runner

import (
	"strings"
	"time"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
)

// PartKind names a part of a message.
type PartKind string

// Part kinds, as in OpenCode's message parts.
const (
	PartText       PartKind = "text"
	PartReasoning  PartKind = "reasoning"
	PartTool       PartKind = "tool"
	PartStepStart  PartKind = "step-start"
	PartStepFinish PartKind = "step-finish"
	PartPatch      PartKind = "patch"
)

// ToolState is where a tool part is in its lifecycle:
// pending → running → completed | error.
type ToolState string

// Tool states.
const (
	ToolPending   ToolState = "pending"
	ToolRunning   ToolState = "running"
	ToolCompleted ToolState = "completed"
	ToolError     ToolState = "error"
)

// abortedMessage is the error of a tool part left unfinished at cleanup.
const abortedMessage = "tool execution aborted"

// Part is one piece of a message. Which fields are set depends on Kind.
type Part struct {
	Kind PartKind
	// ID is the stream's part id (text, reasoning) or the call id (tool).
	ID   string
	Text string // text, reasoning
	Tool *ToolPart
	Step int          // step-start, step-finish, patch
	Fin  *StepFinish  // step-finish
	Diff *event.Patch // patch
	done bool         // text/reasoning: the -end event arrived
	// buf holds a streamed text or reasoning part; Text is its String(),
	// so n deltas cost O(n), not the O(n²) of Text += delta.
	buf strings.Builder
}

// appendText adds a streamed delta to a text or reasoning part.
func (p *Part) appendText(delta string) {
	if p.buf.Len() == 0 && p.Text != "" {
		p.buf.WriteString(p.Text)
	}
	p.buf.WriteString(delta)
	p.Text = p.buf.String()
}

// ToolPart is a tool call and its outcome.
type ToolPart struct {
	Call     llm.ToolCall
	State    ToolState
	Output   string // completed: what the model reads
	Error    string // error: what the model reads (after "Error: ")
	Denied   bool
	Metadata map[string]any
	Start    time.Time
	End      time.Time
	// changes: what the tool wrote, for the step's snapshot.
	touched    []string
	touchedAll bool
	raw        strings.Builder // argument text while pending
}

// StepFinish closes a step: why the model stopped and what it cost.
type StepFinish struct {
	Reason  llm.FinishReason
	Usage   llm.Usage
	CostUSD *float64
}

// Message is one entry of the session: a role and its parts. A user or
// system message has one text part; an assistant message has the parts of
// one step (tool parts carry their results).
type Message struct {
	Role             llm.Role
	Parts            []*Part
	ReasoningDetails []byte
}

// userMessage is a user message with one text part.
func userMessage(text string) *Message {
	return &Message{Role: llm.RoleUser, Parts: []*Part{{Kind: PartText, Text: text, done: true}}}
}

// wire converts a message to what the provider reads: user → one message;
// assistant → the assistant message (text, reasoning, tool calls) followed
// by one tool message per call, in call order; an empty assistant reply is
// left out. The conversion is
// deterministic, so the bytes of a committed message never change.
func (m *Message) wire() []llm.Message {
	if m.Role != llm.RoleAssistant {
		return []llm.Message{{Role: m.Role, Content: m.text(PartText)}}
	}
	am := llm.Message{
		Role:             llm.RoleAssistant,
		Content:          m.text(PartText),
		Reasoning:        m.text(PartReasoning),
		ReasoningDetails: m.ReasoningDetails,
	}
	var results []llm.Message
	for _, p := range m.Parts {
		if p.Kind != PartTool {
			continue
		}
		am.ToolCalls = append(am.ToolCalls, p.Tool.Call)
		results = append(results, llm.Message{
			Role:       llm.RoleTool,
			ToolCallID: p.Tool.Call.ID,
			Content:    p.Tool.modelText(),
		})
	}
	if am.Content == "" && am.Reasoning == "" && len(am.ToolCalls) == 0 {
		return nil // an empty reply: providers reject empty assistant messages
	}
	return append([]llm.Message{am}, results...)
}

// text joins the finished parts of one kind.
func (m *Message) text(kind PartKind) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Kind == kind && p.done {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// toolParts lists the message's tool parts in order.
func (m *Message) toolParts() []*ToolPart {
	var out []*ToolPart
	for _, p := range m.Parts {
		if p.Kind == PartTool {
			out = append(out, p.Tool)
		}
	}
	return out
}

// modelText is the tool message content the model reads.
func (t *ToolPart) modelText() string {
	if t.State == ToolCompleted {
		return t.Output
	}
	msg := t.Error
	if msg == "" {
		msg = abortedMessage
	}
	return "Error: " + msg
}

// finished reports whether the part reached a final state.
func (t *ToolPart) finished() bool {
	return t.State == ToolCompleted || t.State == ToolError
}
