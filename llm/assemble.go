package llm

import (
	"encoding/json"
	"strconv"
)

// assembler turns decoded chunks into unified events, in order, each once.
// Text and reasoning are streamed as they arrive; tool calls are streamed as
// tool-input-* and completed (tool-call) when the stream ends normally.
// Its methods return false once the consumer stopped or a terminal event
// (finish-step or error) was emitted.
type assembler struct {
	tools []ToolDef
	yield func(Event) bool
	alive bool

	textID, reasoningID string // open parts; "" when closed
	parts               int    // counter for part ids

	calls     callSet
	picker    choicePicker
	callIDs   map[string]bool // event ids given to calls
	finish    string          // last non-empty finish_reason
	sawFinish bool
	usage     *Usage
	model     string // the first model a chunk or event named
	details   reasoningDetails
	think     thinkSplitter // a leading <think> block in the content
	streamErr *Error        // in-stream error to report at the end (finish_reason "error")
	onFinish  func()        // called once the reply says it is finished; may be nil
}

func newAssembler(tools []ToolDef, yield func(Event) bool) *assembler {
	return &assembler{tools: tools, yield: yield, alive: true, callIDs: map[string]bool{}}
}

func (a *assembler) emit(ev Event) bool {
	if a.alive && !a.yield(ev) {
		a.alive = false
	}
	return a.alive
}

// payload handles one data payload. A payload that is not JSON is skipped:
// one odd chunk must not end the stream.
func (a *assembler) payload(raw []byte) bool {
	if len(raw) > 0 && raw[0] == '[' {
		return a.errorList(raw)
	}
	c, err := decodeChunk(raw)
	if err != nil {
		return a.alive
	}
	return a.chunk(&c)
}

// errorList handles an array payload: Gemini wraps errors as
// [{"error": {...}}]. Any other array is skipped.
func (a *assembler) errorList(raw []byte) bool {
	var list []struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 || len(list[0].Error) == 0 || string(list[0].Error) == "null" {
		return a.alive
	}
	return a.fail(inStreamError(list[0].Error))
}

func (a *assembler) chunk(c *chunk) bool {
	if a.model == "" {
		a.model = c.Model.String()
	}
	a.takeUsage(c.Usage.usage(), true)
	if c.XGroq != nil {
		a.takeUsage(c.XGroq.Usage.usage(), false)
	}
	if !a.choices(a.picker.pick(c.Choices)) {
		return false
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return a.fail(inStreamError(c.Error))
	}
	if b := c.BaseResp; b != nil && b.StatusCode != 0 {
		return a.fail(classify(errorFacts{InStream: true, Code: strconv.FormatInt(int64(b.StatusCode), 10),
			Message: string(b.StatusMsg)}))
	}
	return a.alive
}

// finishing reports, once, that the reply said it is finished.
func (a *assembler) finishing() {
	if f := a.onFinish; f != nil {
		a.onFinish = nil
		f()
	}
}

// takeModel keeps the first model the reply names.
func (a *assembler) takeModel(m string) {
	if a.model == "" {
		a.model = m
	}
}

// takeUsage keeps a reported usage: the top-level usage member replaces
// what came before (the last report wins); a usage found elsewhere (inside
// choices[0], in an x_* vendor block) is taken only while none is known.
// A nil usage (absent, or all zeros) changes nothing.
func (a *assembler) takeUsage(u *Usage, top bool) {
	if u != nil && (top || a.usage == nil) {
		a.usage = u
	}
}

// choices reads the choices that belong to the reply (choicePicker).
func (a *assembler) choices(list []choice) bool {
	for i := range list {
		a.takeUsage(list[i].Usage.usage(), false)
		if !a.choice(&list[i]) {
			return false
		}
	}
	return a.alive
}

func (a *assembler) choice(ch *choice) bool {
	d := ch.Delta
	if d == nil {
		d = ch.Message
	}
	if d != nil && !a.delta(d) {
		return false
	}
	if ch.FinishReason != "" {
		a.finish, a.sawFinish = string(ch.FinishReason), true
		a.finishing()
		if m := lookupFinish(a.finish); m.Fail != "" && a.streamErr == nil {
			a.streamErr = &Error{Class: m.Fail, Message: m.Detail}
		}
	}
	return a.alive
}

func (a *assembler) delta(d *delta) bool {
	text, reasoning := contentParts(d.Content)
	text += string(d.Refusal)
	switch {
	case d.ReasoningContent != "":
		reasoning += string(d.ReasoningContent)
	case d.Reasoning != "":
		reasoning += string(d.Reasoning)
	case d.ReasoningText != "":
		reasoning += string(d.ReasoningText)
	}
	a.details.add(d.ReasoningDetails)
	if reasoning != "" && !a.reasoningDelta(reasoning) {
		return false
	}
	switch {
	case text == "":
	case a.think.passing():
		if !a.textDelta(text) {
			return false
		}
	case !a.segments(a.think.feed(text)):
		return false
	}
	for i := range d.ToolCalls {
		if !a.toolDelta(&d.ToolCalls[i]) {
			return false
		}
	}
	return a.alive
}

// segments streams content split by the think splitter.
func (a *assembler) segments(segs []segment) bool {
	for _, sg := range segs {
		ok := false
		if sg.reasoning {
			ok = a.reasoningDelta(sg.text)
		} else {
			ok = a.textDelta(sg.text)
		}
		if !ok {
			return false
		}
	}
	return a.alive
}

func (a *assembler) textDelta(s string) bool {
	if !a.closeReasoning() {
		return false
	}
	if a.textID == "" {
		a.parts++
		a.textID = "text-" + strconv.Itoa(a.parts)
		if !a.emit(Event{Type: EventTextStart, ID: a.textID}) {
			return false
		}
	}
	return a.emit(Event{Type: EventTextDelta, ID: a.textID, Delta: s})
}

func (a *assembler) reasoningDelta(s string) bool {
	if !a.closeText() {
		return false
	}
	if a.reasoningID == "" {
		a.parts++
		a.reasoningID = "reasoning-" + strconv.Itoa(a.parts)
		if !a.emit(Event{Type: EventReasoningStart, ID: a.reasoningID}) {
			return false
		}
	}
	return a.emit(Event{Type: EventReasoningDelta, ID: a.reasoningID, Delta: s})
}

func (a *assembler) closeText() bool {
	if a.textID == "" {
		return a.alive
	}
	id := a.textID
	a.textID = ""
	return a.emit(Event{Type: EventTextEnd, ID: id})
}

func (a *assembler) closeReasoning() bool {
	if a.reasoningID == "" {
		return a.alive
	}
	id := a.reasoningID
	a.reasoningID = ""
	return a.emit(Event{Type: EventReasoningEnd, ID: id})
}

// toolDelta routes a tool-call fragment and streams it. A call starts
// (tool-input-start) once its name is complete: when its arguments begin,
// when a fragment of another call arrives, or at the end of the stream.
func (a *assembler) toolDelta(d *toolCallDelta) bool {
	if !a.closeReasoning() {
		return false
	}
	c := a.calls.route(d)
	c.apply(d)
	for _, o := range a.calls.calls {
		if o != c && !o.started && o.name != "" && !a.startCall(o) {
			return false
		}
	}
	if !c.ready() {
		return a.alive
	}
	return a.startCall(c) && a.flushCall(c)
}

func (a *assembler) startCall(c *callAcc) bool {
	if c.started {
		return a.alive
	}
	c.started = true
	c.ensureID(a.callIDs)
	return a.emit(Event{Type: EventToolInputStart, ID: c.eventID, ToolName: c.name})
}

func (a *assembler) flushCall(c *callAcc) bool {
	frag := c.takePending()
	if frag == "" {
		return a.alive
	}
	return a.emit(Event{Type: EventToolInputDelta, ID: c.eventID, ToolName: c.name, Delta: frag})
}

// end finishes a stream that ended normally ([DONE], or EOF after a
// finish_reason). A stream that ended with neither is incomplete.
func (a *assembler) end(done bool) {
	if !a.choices(a.picker.flush()) {
		return
	}
	if a.streamErr != nil {
		a.fail(a.streamErr)
		return
	}
	if !done && !a.sawFinish {
		a.fail(&Error{Class: ClassRetryable, Err: ErrIncompleteStream,
			Message: "incomplete stream: the connection closed before a finish_reason or [DONE]"})
		return
	}
	if !a.segments(a.think.flush()) || !a.closeReasoning() || !a.closeText() {
		return
	}
	var calls []ToolCall
	for _, c := range a.calls.calls {
		if !c.started && c.name == "" && c.wireID == "" && c.args.Len() == 0 {
			continue
		}
		if !a.startCall(c) || !a.flushCall(c) {
			return
		}
		if !a.emit(Event{Type: EventToolInputEnd, ID: c.eventID, ToolName: c.name}) {
			return
		}
		tc := c.toolCall(a.tools)
		calls = append(calls, tc)
		if !a.emit(Event{Type: EventToolCall, ID: tc.ID, ToolName: tc.NameAsSent, ToolCall: &tc}) {
			return
		}
	}
	a.emit(Event{
		Type:             EventFinishStep,
		FinishReason:     finishReason(a.finish, calls),
		Usage:            a.usage,
		ReasoningDetails: a.details.json(),
		Model:            a.model,
	})
	a.alive = false
}

// fail ends the stream with an error event: open text and reasoning parts
// are closed first (their text stays for display); partial tool calls are
// dropped.
func (a *assembler) fail(err *Error) bool {
	if a.segments(a.think.flush()) && a.closeReasoning() && a.closeText() {
		a.emit(Event{Type: EventError, Err: err})
	}
	a.alive = false
	return false
}

// finishReason normalises the provider's finish_reason (lookupFinish).
// Complete tool calls make it tool-calls whatever was sent (Gemini sends
// "stop").
func finishReason(sent string, calls []ToolCall) FinishReason {
	valid := false
	for _, c := range calls {
		if c.Name != "" && !c.ArgumentsInvalid {
			valid = true
		}
	}
	if valid {
		return FinishToolCalls
	}
	r := lookupFinish(sent).Reason
	if len(calls) > 0 && (r == FinishStop || r == FinishUnknown) {
		return FinishToolCalls
	}
	return r
}

// inStreamError classifies the value of a chunk's top-level error member.
func inStreamError(raw json.RawMessage) *Error {
	b := parseErrorValue(raw)
	return classify(errorFacts{InStream: true, Code: b.Code, Type: b.Type, Message: b.Message,
		RetryDelay: b.RetryDelay, QuotaPeriod: b.QuotaPeriod, BodyHeader: b.Header})
}
