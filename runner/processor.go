package runner

import (
	"context"
	"encoding/json"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
)

// turn is one attempt at a step: the assistant message being built from
// the stream, and how the stream ended.
type turn struct {
	step       int
	last       bool
	msg        *Message
	open       map[string]*Part // text and reasoning parts by kind and id
	calls      map[string]*Part // tool parts by call id
	finish     llm.FinishReason
	usage      *llm.Usage
	model      string // the model the provider's reply named
	err        error
	ran        int             // tool calls that started running
	structured json.RawMessage // a valid StructuredOutput call's arguments
}

func newTurn(step int, last bool) *turn {
	return &turn{
		step:  step,
		last:  last,
		msg:   &Message{Role: llm.RoleAssistant, Parts: []*Part{{Kind: PartStepStart, Step: step}}},
		open:  map[string]*Part{},
		calls: map[string]*Part{},
	}
}

// process streams one model call into a turn, running each tool call as
// soon as its arguments are complete; the stream is read ahead meanwhile
// (readAhead), so a cancel or timeout during a tool call keeps the usage
// the provider had sent (keepUsage). Whatever happens, every tool part
// ends completed or error.
func (s *Session) process(ctx context.Context, req llm.Request, last bool) *turn {
	t := newTurn(s.step, last)
	defer s.cleanup(t)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends a stream the loop left early
	stream := readStream(s.cfg.Model.Stream(sctx, req))
	defer stream.stop()
	for {
		ev, ok := stream.next(ctx)
		if !ok || ctx.Err() != nil || !s.handle(ctx, t, ev) {
			break // a provider that ignores the context is not waited for
		}
	}
	if t.err == nil && t.finish == "" {
		if ctx.Err() != nil {
			t.err = context.Cause(ctx)
			keepUsage(t, stream.rest(drainGrace))
		} else {
			t.err = ErrStreamEnded
		}
	}
	return t
}

// keepUsage takes the usage of a cancelled turn from the events the
// stream delivered that were not handled: the provider reports it once
// the reply is complete, and bills the call whether or not the run read
// it. Nothing else of them is acted on (no tool call starts after the
// cancel), and the turn stays unfinished.
func keepUsage(t *turn, rest []llm.Event) {
	for _, ev := range rest {
		if ev.Type == llm.EventFinishStep && ev.Usage != nil {
			u := *ev.Usage
			t.usage = &u
		}
	}
}

// handle records one stream event; false means the stream is over.
func (s *Session) handle(ctx context.Context, t *turn, ev llm.Event) bool {
	switch ev.Type {
	case llm.EventTextStart, llm.EventTextDelta:
		t.part(PartText, ev.ID).appendText(ev.Delta)
	case llm.EventReasoningStart, llm.EventReasoningDelta:
		t.part(PartReasoning, ev.ID).appendText(ev.Delta)
	case llm.EventTextEnd:
		s.closePart(t, PartText, ev.ID)
	case llm.EventReasoningEnd:
		s.closePart(t, PartReasoning, ev.ID)
	case llm.EventToolInputStart:
		t.toolPart(ev.ID, ev.ToolName)
	case llm.EventToolInputDelta:
		t.toolPart(ev.ID, ev.ToolName).Tool.raw.WriteString(ev.Delta)
	case llm.EventToolCall:
		if ev.ToolCall != nil {
			key := ev.ID // the id of the tool-input events, if any
			if key == "" {
				key = ev.ToolCall.ID
			}
			s.runCall(ctx, t, key, ev.ToolCall)
		}
	case llm.EventFinishStep:
		s.closeAll(t)
		t.finish = ev.FinishReason
		if t.finish == "" {
			t.finish = llm.FinishUnknown
		}
		t.usage = ev.Usage
		t.model = ev.Model
		t.msg.ReasoningDetails = ev.ReasoningDetails
	case llm.EventError:
		t.err = ev.Err
		if t.err == nil {
			t.err = &llm.Error{Class: llm.ClassFatal, Message: "model stream error without detail"}
		}
		return false
	}
	return true
}

// part returns the open text or reasoning part with this id, adding it.
func (t *turn) part(kind PartKind, id string) *Part {
	key := string(kind) + "\x00" + id
	if p, ok := t.open[key]; ok {
		return p
	}
	p := &Part{Kind: kind, ID: id}
	t.open[key] = p
	t.msg.Parts = append(t.msg.Parts, p)
	return p
}

// closePart finishes a text or reasoning part and emits it whole.
func (s *Session) closePart(t *turn, kind PartKind, id string) {
	key := string(kind) + "\x00" + id
	p, ok := t.open[key]
	if !ok {
		return
	}
	delete(t.open, key)
	p.done = true
	if p.Text == "" {
		return
	}
	if kind == PartText {
		s.emit(event.Text{Step: t.step, Text: p.Text})
	} else {
		s.emit(event.Reasoning{Step: t.step, Text: p.Text})
	}
}

// closeAll finishes parts the provider never closed, in order.
func (s *Session) closeAll(t *turn) {
	for _, p := range t.msg.Parts {
		if (p.Kind == PartText || p.Kind == PartReasoning) && !p.done {
			s.closePart(t, p.Kind, p.ID)
		}
	}
}

// toolPart returns the tool part of a call id, adding a pending one.
func (t *turn) toolPart(id, name string) *Part {
	if p, ok := t.calls[id]; ok {
		return p
	}
	p := &Part{Kind: PartTool, ID: id, Tool: &ToolPart{
		Call:  llm.ToolCall{ID: id, Name: name, NameAsSent: name},
		State: ToolPending,
	}}
	t.calls[id] = p
	t.msg.Parts = append(t.msg.Parts, p)
	return p
}

// hasTools reports whether the turn made any tool call, whatever the
// finish reason said (a provider may say stop with calls in the turn).
func (t *turn) hasTools() bool { return len(t.calls) > 0 }

// cleanup turns every unfinished tool part into an error the model reads.
func (s *Session) cleanup(t *turn) {
	for _, p := range t.msg.Parts {
		if p.Kind != PartTool || p.Tool.finished() {
			continue
		}
		tp := p.Tool
		wasRunning := tp.State == ToolRunning
		tp.State = ToolError
		tp.Error = abortedMessage
		tp.End = s.cfg.Now()
		if tp.Call.Arguments == nil && !tp.Call.ArgumentsInvalid {
			tp.Call.ArgumentsRaw = tp.raw.String()
			tp.Call.ArgumentsInvalid = true
		}
		if wasRunning {
			s.emit(event.ToolFailed{Step: t.step, CallID: tp.Call.ID, Tool: tp.Call.Name,
				Error: abortedMessage, DurationMS: tp.durationMS()})
		}
	}
}

// produced reports whether the attempt got any output from the model (a
// part beyond the step-start marker, or a tool call that ran).
func (t *turn) produced() bool { return t.ran > 0 || len(t.msg.Parts) > 1 }

// ranOnly is the assistant message of a failed attempt reduced to the tool
// calls that ran, or nil when none did.
func (t *turn) ranOnly() *Message {
	if t.ran == 0 {
		return nil
	}
	m := &Message{Role: llm.RoleAssistant}
	for _, p := range t.msg.Parts {
		if p.Kind == PartTool && !p.Tool.Start.IsZero() {
			m.Parts = append(m.Parts, p)
		}
	}
	return m
}

// durationMS is a tool part's run time.
func (tp *ToolPart) durationMS() int64 {
	if tp.Start.IsZero() || tp.End.Before(tp.Start) {
		return 0
	}
	return tp.End.Sub(tp.Start).Milliseconds()
}
