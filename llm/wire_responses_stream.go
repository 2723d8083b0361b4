package llm

import (
	"encoding/json"
	"sort"
	"strconv"
)

// responsesDecoder reads a Responses stream: response.created, output
// items (added, their deltas, done), and one terminal event:
// response.completed, response.incomplete, response.failed or error.
//
// An item's content is taken from the first place it appears: its deltas,
// else its done events (output_text.done, function_call_arguments.done,
// output_item.done), else the terminal response's output. Gateways that
// translate other APIs send some items only whole (lidge-jun/opencodex#4652,
// NVIDIA-NeMo/Switchyard#777).
type responsesDecoder struct {
	a      *assembler
	calls  map[string]*respCallAcc // by item id
	order  []string                // call item ids in arrival order
	items  map[int]json.RawMessage // finished output items by output_index
	seen   map[string]bool         // items added or done, by id and by "#index"
	texted map[string]bool         // message items whose text was shown, likewise
	done   bool
}

type respCallAcc struct {
	callID, name string
	args         []byte  // the streamed argument deltas
	final        *string // function_call_arguments.done's arguments
	index        int
	call         *ToolCall
}

// arguments are the call's final arguments: those given (an item's), else
// function_call_arguments.done's, else the deltas joined.
func (c *respCallAcc) arguments(given string) string {
	switch {
	case given != "":
		return given
	case c.final != nil && *c.final != "":
		return *c.final
	}
	return string(c.args)
}

func newResponsesDecoder(a *assembler) *responsesDecoder {
	return &responsesDecoder{a: a, calls: map[string]*respCallAcc{}, items: map[int]json.RawMessage{},
		seen: map[string]bool{}, texted: map[string]bool{}}
}

// itemKeys are the keys an item is known by: its id, if any, and its
// output index.
func itemKeys(id string, index int) []string {
	keys := []string{"#" + strconv.Itoa(index)}
	if id != "" {
		keys = append(keys, id)
	}
	return keys
}

func mark(m map[string]bool, id string, index int) {
	for _, k := range itemKeys(id, index) {
		m[k] = true
	}
}

func marked(m map[string]bool, id string, index int) bool {
	for _, k := range itemKeys(id, index) {
		if m[k] {
			return true
		}
	}
	return false
}

type respEvent struct {
	Type         string          `json:"type"`
	OutputIndex  int             `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	ItemID       string          `json:"item_id"`
	Delta        string          `json:"delta"`
	Arguments    *string         `json:"arguments"`
	Text         string          `json:"text"`    // output_text.done
	Refusal      string          `json:"refusal"` // refusal.done
	Item         json.RawMessage `json:"item"`
	Response     *respResponse   `json:"response"`
	Error        json.RawMessage `json:"error"`
	Code         json.RawMessage `json:"code"`
	Message      string          `json:"message"`
}

type respResponse struct {
	Model             lenientString   `json:"model"`
	Status            string          `json:"status"`
	Error             json.RawMessage `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage  *respUsage        `json:"usage"`
	Output []json.RawMessage `json:"output"`
}

type respUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func (u *respUsage) usage() *Usage {
	if u == nil || (u.InputTokens == 0 && u.OutputTokens == 0) {
		return nil
	}
	out := &Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	if d := u.InputTokensDetails; d != nil {
		out.CachedInputTokens = d.CachedTokens
	}
	if d := u.OutputTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	return out
}

type respItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

func (d *responsesDecoder) payload(raw []byte) bool {
	var ev respEvent
	if lenientUnmarshal(raw, &ev) != nil {
		return d.a.alive
	}
	a := d.a
	if ev.Response != nil {
		a.takeModel(string(ev.Response.Model)) // response.created, repeated in the terminal event
	}
	switch ev.Type {
	case "response.output_item.added":
		return d.itemAdded(ev.OutputIndex, ev.Item)
	case "response.output_text.delta", "response.refusal.delta":
		if ev.Delta != "" {
			mark(d.texted, ev.ItemID, ev.OutputIndex)
			return a.textDelta(ev.Delta)
		}
	case "response.output_text.done", "response.refusal.done":
		return d.wholeText(ev.ItemID, ev.OutputIndex, ev.Text+ev.Refusal)
	case "response.reasoning_summary_part.added":
		if ev.SummaryIndex > 0 {
			return a.reasoningDelta("\n\n")
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if ev.Delta != "" {
			return a.reasoningDelta(ev.Delta)
		}
	case "response.function_call_arguments.delta":
		if c := d.call(ev.ItemID, ev.OutputIndex); c != nil && ev.Delta != "" {
			c.args = append(c.args, ev.Delta...)
			return a.emit(Event{Type: EventToolInputDelta, ID: c.callID, ToolName: c.name, Delta: ev.Delta})
		}
	case "response.function_call_arguments.done":
		if c := d.call(ev.ItemID, ev.OutputIndex); c != nil && ev.Arguments != nil {
			c.final = ev.Arguments
		}
	case "response.output_item.done":
		return d.itemDone(ev.OutputIndex, ev.Item)
	case "response.completed", "response.incomplete":
		d.finish(ev.Response)
		return false
	case "response.failed":
		var e json.RawMessage
		if ev.Response != nil {
			e = ev.Response.Error
		}
		if len(e) == 0 || string(e) == "null" {
			e = json.RawMessage(`{"message":"the response failed"}`)
		}
		return a.fail(inStreamError(e))
	case "error":
		return a.fail(responsesErrorEvent(raw, ev.Error))
	case "":
		if len(ev.Error) > 0 && string(ev.Error) != "null" {
			return a.fail(inStreamError(ev.Error)) // "event: error", wrapped by sseReader
		}
	}
	return a.alive
}

// responsesErrorEvent classifies an error event. OpenAI documents its
// members at the top level ({"type":"error","code","message","param"});
// the API also sends them nested under "error" (openai/openai-dotnet#881,
// Effect-TS/effect#7262), where a top-level reading finds no code.
func responsesErrorEvent(raw, nested json.RawMessage) *Error {
	if len(nested) > 0 && string(nested) != "null" {
		return inStreamError(nested)
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return inStreamError(raw)
	}
	delete(top, "type") // the event's type ("error"), not the error's
	b := errorFields(top)
	if b.Message == "" {
		b.Message = "the response stream reported an error"
	}
	return classify(errorFacts{InStream: true, Code: b.Code, Type: b.Type, Message: b.Message,
		RetryDelay: b.RetryDelay, QuotaPeriod: b.QuotaPeriod, BodyHeader: b.Header})
}

// wholeText shows the text of a message item that streamed no deltas.
func (d *responsesDecoder) wholeText(itemID string, index int, text string) bool {
	if text == "" || marked(d.texted, itemID, index) {
		return d.a.alive
	}
	mark(d.texted, itemID, index)
	return d.a.textDelta(text)
}

func (d *responsesDecoder) itemAdded(index int, raw json.RawMessage) bool {
	var it respItem
	if lenientUnmarshal(raw, &it) != nil {
		return d.a.alive
	}
	mark(d.seen, it.ID, index)
	if it.Type != "function_call" {
		return d.a.alive
	}
	if !d.a.closeReasoning() || !d.a.closeText() {
		return false
	}
	key := d.callKey(it.ID, index)
	c := &respCallAcc{callID: d.a.uniqueCallID(it.CallID), name: it.Name, index: index}
	d.calls[key] = c
	d.order = append(d.order, key)
	return d.a.emit(Event{Type: EventToolInputStart, ID: c.callID, ToolName: it.Name})
}

// callKey is the key of a new call: its item id, or its output index when
// the id is missing or taken.
func (d *responsesDecoder) callKey(itemID string, index int) string {
	if _, taken := d.calls[itemID]; itemID != "" && !taken {
		return itemID
	}
	return "#" + strconv.Itoa(index)
}

// call finds a call by item id, else by output index.
func (d *responsesDecoder) call(itemID string, index int) *respCallAcc {
	if c := d.calls[itemID]; c != nil && itemID != "" {
		return c
	}
	return d.calls["#"+strconv.Itoa(index)]
}

// itemDone keeps a finished item; a function_call's arguments are final
// here, whatever the deltas said.
func (d *responsesDecoder) itemDone(index int, raw json.RawMessage) bool {
	var it respItem
	if lenientUnmarshal(raw, &it) != nil {
		return d.a.alive
	}
	mark(d.seen, it.ID, index)
	switch it.Type {
	case "function_call":
		c := d.call(it.ID, index)
		if c == nil { // never added: the call arrives whole
			if !d.itemAdded(index, raw) {
				return false
			}
			c = d.call(it.ID, index)
		}
		if c == nil || c.call != nil {
			return d.a.alive
		}
		args := c.arguments(it.Arguments)
		acc := &callAcc{name: c.name, eventID: c.callID}
		acc.args.WriteString(args)
		tc := acc.toolCall(d.a.tools)
		c.call = &tc
		d.items[index] = mustJSON(respCall{Type: "function_call", CallID: c.callID, Name: c.name, Arguments: args})
		return d.a.emit(Event{Type: EventToolInputEnd, ID: c.callID, ToolName: c.name})
	case "reasoning":
		if kept := keptReasoning(raw); kept != nil {
			d.items[index] = kept
		}
	case "message":
		d.items[index] = keptMessage(raw)
		text := ""
		for _, p := range it.Content {
			text += p.Text + p.Refusal
		}
		return d.wholeText(it.ID, index, text)
	}
	return d.a.alive
}

// snapshot takes the items of the terminal response's output that the
// stream never added nor finished.
func (d *responsesDecoder) snapshot(r *respResponse) bool {
	for i, raw := range r.Output {
		var it respItem
		if lenientUnmarshal(raw, &it) != nil || marked(d.seen, it.ID, i) {
			continue
		}
		if !d.itemDone(i, raw) {
			return false
		}
	}
	return d.a.alive
}

// keptReasoning is a reasoning item as it goes back: without its status;
// nil without encrypted_content (store: false cannot resolve it by id).
func keptReasoning(raw json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || len(obj["encrypted_content"]) == 0 || string(obj["encrypted_content"]) == "null" {
		return nil
	}
	delete(obj, "status")
	b, err := encodeObject(obj)
	if err != nil {
		return nil
	}
	return b
}

// keptMessage is an output message as it goes back: role and content,
// without the id and status a stateless request cannot refer to.
func keptMessage(raw json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return raw
	}
	delete(obj, "id")
	delete(obj, "status")
	b, err := encodeObject(obj)
	if err != nil {
		return raw
	}
	return b
}

// finish ends a completed or incomplete response.
func (d *responsesDecoder) finish(r *respResponse) {
	a := d.a
	d.done = true
	if r != nil && !d.snapshot(r) {
		return
	}
	if !a.closeReasoning() || !a.closeText() {
		return
	}
	var calls []ToolCall
	for _, id := range d.order {
		c := d.calls[id]
		if c.call == nil { // no output_item.done: take the streamed arguments
			if !a.emit(Event{Type: EventToolInputEnd, ID: c.callID, ToolName: c.name}) {
				return
			}
			acc := &callAcc{name: c.name, eventID: c.callID}
			acc.args.WriteString(c.arguments(""))
			tc := acc.toolCall(a.tools)
			c.call = &tc
		}
		calls = append(calls, *c.call)
	}
	for i := range calls {
		if !a.emit(Event{Type: EventToolCall, ID: calls[i].ID, ToolName: calls[i].NameAsSent, ToolCall: &calls[i]}) {
			return
		}
	}
	reason := FinishStop
	var usage *Usage
	if r != nil {
		usage = r.Usage.usage()
		if r.Status == "incomplete" {
			reason = FinishUnknown
			if r.IncompleteDetails != nil {
				reason = responsesIncomplete(r.IncompleteDetails.Reason)
			}
		}
	}
	if len(calls) > 0 && reason == FinishStop {
		reason = FinishToolCalls
	}
	a.emit(Event{Type: EventFinishStep, FinishReason: reason, Usage: usage, ReasoningDetails: d.kept(), Model: a.model})
	a.alive = false
}

// responsesIncomplete maps incomplete_details.reason.
func responsesIncomplete(reason string) FinishReason {
	switch reason {
	case "max_output_tokens":
		return FinishLength
	case "content_filter":
		return FinishContentFilter
	}
	return FinishUnknown
}

// kept is the turn's output items for ReasoningDetails when it holds
// reasoning (which must go back with its encrypted content); nil
// otherwise.
func (d *responsesDecoder) kept() json.RawMessage {
	idx := make([]int, 0, len(d.items))
	reasoning := false
	for i, it := range d.items {
		idx = append(idx, i)
		reasoning = reasoning || blockType(it) == "reasoning"
	}
	if !reasoning {
		return nil
	}
	sort.Ints(idx)
	items := make([]json.RawMessage, 0, len(idx))
	for _, i := range idx {
		items = append(items, d.items[i])
	}
	return keepBlocks("responses", items)
}

// end: the body ended before a terminal event.
func (d *responsesDecoder) end() {
	if d.done {
		return
	}
	d.a.fail(&Error{Class: ClassRetryable, Err: ErrIncompleteStream,
		Message: "incomplete stream: the connection closed before response.completed"})
}
