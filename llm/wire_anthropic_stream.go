package llm

import (
	"encoding/json"
	"strings"
)

// anthropicDecoder reads a Messages stream: message_start, then per
// content block content_block_start, _delta and _stop, then message_delta
// (stop_reason, usage) and message_stop; ping is ignored and an error
// event ends the stream.
type anthropicDecoder struct {
	a      *assembler
	blocks map[int]*anthBlockAcc
	order  []int
	calls  []ToolCall
	usage  anthUsage
	stop   string
	done   bool
}

// anthBlockAcc is one content block while it streams.
type anthBlockAcc struct {
	typ       string
	start     json.RawMessage // content_block as started
	text      strings.Builder // text, thinking, or tool input JSON
	signature strings.Builder
	id, name  string
	partID    string // the unified part id: text-N, reasoning-N or the call id
	call      *ToolCall
}

type anthUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
}

// merge takes the counts a later report carries (message_delta repeats
// or updates them).
func (u *anthUsage) merge(o *anthUsage) {
	if o == nil {
		return
	}
	for _, f := range []struct{ dst, src **int64 }{
		{&u.InputTokens, &o.InputTokens}, {&u.OutputTokens, &o.OutputTokens},
		{&u.CacheReadInputTokens, &o.CacheReadInputTokens}, {&u.CacheCreationInputTokens, &o.CacheCreationInputTokens},
	} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
}

// usage converts to Usage: Anthropic's input_tokens leave out the cached
// and cache-written tokens, Usage.InputTokens counts them.
func (u anthUsage) usage() *Usage {
	v := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	out := &Usage{
		InputTokens:       v(u.InputTokens) + v(u.CacheReadInputTokens) + v(u.CacheCreationInputTokens),
		OutputTokens:      v(u.OutputTokens),
		CachedInputTokens: v(u.CacheReadInputTokens),
		CacheWriteTokens:  v(u.CacheCreationInputTokens),
	}
	if *out == (Usage{}) {
		return nil
	}
	return out
}

func newAnthropicDecoder(a *assembler) *anthropicDecoder {
	return &anthropicDecoder{a: a, blocks: map[int]*anthBlockAcc{}}
}

type anthEvent struct {
	Type         string          `json:"type"`
	Index        int             `json:"index"`
	Message      *anthMsgStart   `json:"message"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        *anthDelta      `json:"delta"`
	Usage        *anthUsage      `json:"usage"`
	Error        json.RawMessage `json:"error"`
}

type anthMsgStart struct {
	Model lenientString `json:"model"`
	Usage *anthUsage    `json:"usage"`
}

type anthDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	StopReason  string `json:"stop_reason"`
}

func (d *anthropicDecoder) payload(raw []byte) bool {
	var ev anthEvent
	if lenientUnmarshal(raw, &ev) != nil {
		return d.a.alive // one odd payload must not end the stream
	}
	if len(ev.Error) > 0 && string(ev.Error) != "null" {
		return d.a.fail(inStreamError(ev.Error))
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			d.a.takeModel(string(ev.Message.Model))
			d.usage.merge(ev.Message.Usage)
		}
	case "content_block_start":
		return d.blockStart(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		if ev.Delta != nil {
			return d.blockDelta(ev.Index, ev.Delta)
		}
	case "content_block_stop":
		return d.blockStop(ev.Index)
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			d.stop = ev.Delta.StopReason
			d.a.finishing() // message_stop is all that may follow
		}
		d.usage.merge(ev.Usage)
	case "message_stop":
		d.finish()
		return false
	}
	return d.a.alive
}

func (d *anthropicDecoder) blockStart(i int, raw json.RawMessage) bool {
	var cb struct {
		Type     string `json:"type"`
		ID       string `json:"id"`
		Name     string `json:"name"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	}
	if lenientUnmarshal(raw, &cb) != nil {
		return d.a.alive
	}
	b := &anthBlockAcc{typ: cb.Type, start: raw, id: cb.ID, name: cb.Name}
	d.blocks[i] = b
	d.order = append(d.order, i)
	switch cb.Type {
	case "text":
		return d.text(b, cb.Text)
	case "thinking":
		return d.thinking(b, cb.Thinking)
	case "tool_use":
		if !d.a.closeReasoning() || !d.a.closeText() {
			return false
		}
		b.partID = d.a.uniqueCallID(cb.ID)
		return d.a.emit(Event{Type: EventToolInputStart, ID: b.partID, ToolName: cb.Name})
	}
	return d.a.alive // redacted_thinking and server blocks are kept, not shown
}

func (d *anthropicDecoder) text(b *anthBlockAcc, s string) bool {
	if s == "" {
		return d.a.alive
	}
	b.text.WriteString(s)
	return d.a.textDelta(s)
}

func (d *anthropicDecoder) thinking(b *anthBlockAcc, s string) bool {
	if s == "" {
		return d.a.alive
	}
	b.text.WriteString(s)
	return d.a.reasoningDelta(s)
}

func (d *anthropicDecoder) blockDelta(i int, delta *anthDelta) bool {
	b := d.blocks[i]
	if b == nil {
		return d.a.alive
	}
	switch delta.Type {
	case "text_delta":
		return d.text(b, delta.Text)
	case "thinking_delta":
		return d.thinking(b, delta.Thinking)
	case "signature_delta":
		b.signature.WriteString(delta.Signature)
	case "input_json_delta":
		if delta.PartialJSON == "" {
			return d.a.alive
		}
		b.text.WriteString(delta.PartialJSON)
		if b.typ == "tool_use" {
			return d.a.emit(Event{Type: EventToolInputDelta, ID: b.partID, ToolName: b.name, Delta: delta.PartialJSON})
		}
	}
	return d.a.alive
}

// blockStop ends a block; a tool_use becomes a call, announced (tool-call)
// only when the message ends normally.
func (d *anthropicDecoder) blockStop(i int) bool {
	b := d.blocks[i]
	if b == nil || b.typ != "tool_use" {
		return d.a.alive
	}
	acc := &callAcc{name: b.name, eventID: b.partID}
	acc.args.WriteString(b.text.String())
	tc := acc.toolCall(d.a.tools)
	b.call = &tc
	d.calls = append(d.calls, tc)
	return d.a.emit(Event{Type: EventToolInputEnd, ID: b.partID, ToolName: b.name})
}

// finish closes the message: open parts, the tool calls, and finish-step
// with the mapped stop_reason, the usage and the kept blocks.
func (d *anthropicDecoder) finish() {
	a := d.a
	d.done = true
	if !a.closeReasoning() || !a.closeText() {
		return
	}
	for _, i := range d.order { // a tool_use block the stream never stopped
		if b := d.blocks[i]; b.typ == "tool_use" && b.call == nil && !d.blockStop(i) {
			return
		}
	}
	for i := range d.calls {
		tc := d.calls[i]
		if !a.emit(Event{Type: EventToolCall, ID: tc.ID, ToolName: tc.NameAsSent, ToolCall: &tc}) {
			return
		}
	}
	reason := anthropicFinish(d.stop)
	if len(d.calls) > 0 && reason != FinishLength {
		reason = FinishToolCalls
	}
	a.emit(Event{Type: EventFinishStep, FinishReason: reason, Usage: d.usage.usage(), ReasoningDetails: d.kept(), Model: a.model})
	a.alive = false
}

// anthropicFinish maps a stop_reason (Messages API, "Handling stop
// reasons"). pause_turn (a long turn the API paused) is FinishPaused: the
// runner sends the turn back as it is to let the model go on.
func anthropicFinish(stop string) FinishReason {
	switch stop {
	case "end_turn", "stop_sequence":
		return FinishStop
	case "tool_use":
		return FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return FinishLength
	case "refusal":
		return FinishContentFilter
	case "pause_turn":
		return FinishPaused
	}
	return FinishUnknown
}

// kept is the turn's blocks for ReasoningDetails when it holds thinking
// (which must go back verbatim); nil otherwise, as the rest is rebuilt
// from the message.
func (d *anthropicDecoder) kept() json.RawMessage {
	thinking := false
	var blocks []json.RawMessage
	for _, i := range d.order {
		b := d.blocks[i]
		switch b.typ {
		case "thinking":
			thinking = true
			blocks = append(blocks, mustJSON(anthThinking{Type: "thinking", Thinking: b.text.String(), Signature: b.signature.String()}))
		case "redacted_thinking":
			thinking = true
			blocks = append(blocks, b.start)
		case "text":
			if b.text.Len() > 0 {
				t := b.text.String()
				blocks = append(blocks, mustJSON(anthBlock{Type: "text", Text: &t}))
			}
		case "tool_use":
			if b.call != nil {
				blocks = append(blocks, mustJSON(anthBlock{Type: "tool_use", ID: b.partID, Name: b.name, Input: callInput(*b.call)}))
			}
		}
	}
	if !thinking {
		return nil
	}
	return keepBlocks("anthropic", blocks)
}

// end: the body ended before message_stop.
func (d *anthropicDecoder) end() {
	if d.done {
		return
	}
	d.a.fail(&Error{Class: ClassRetryable, Err: ErrIncompleteStream,
		Message: "incomplete stream: the connection closed before message_stop"})
}
