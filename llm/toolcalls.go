package llm

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// callAcc accumulates one streamed tool call.
type callAcc struct {
	wireID  string // the id as sent; "" until one arrives
	eventID string // the id used in events: wireID, or a generated one
	name    string // the name as sent
	args    strings.Builder
	pending int // bytes of args not yet emitted as tool-input-delta
	extra   json.RawMessage
	started bool
	// cumulative is set once a fragment resent the arguments so far.
	cumulative bool
}

// callSet keys streamed tool-call deltas to calls (README rules "Tool calls").
type callSet struct {
	calls   []*callAcc
	byIndex map[int64]*callAcc
	last    *callAcc
}

// route finds or creates the call a delta belongs to:
//   - with an index: the call at that index, unless the delta carries both
//     a different id and a function name, which starts a new call there
//     (Ollama, Foundry Local); a different id alone continues the call and
//     the first id wins (Poolside resends a fresh id on every fragment);
//   - without an index: a known id continues its call; a new id with a
//     name starts a call (Gemini sends whole calls); a new id without a
//     name, or no id, continues the last call;
//   - either way, a named delta with new arguments after a call whose
//     arguments are complete starts a new call (followedBy).
func (s *callSet) route(d *toolCallDelta) *callAcc {
	id, named := string(d.ID), d.Function.Name != ""
	if d.Index != nil {
		if s.byIndex == nil {
			s.byIndex = map[int64]*callAcc{}
		}
		idx := int64(*d.Index)
		c := s.byIndex[idx]
		if c == nil || (named && id != "" && c.wireID != "" && id != c.wireID) || c.followedBy(d) {
			c = s.add()
			s.byIndex[idx] = c
		}
		s.last = c
		return c
	}
	if id != "" {
		for _, c := range s.calls {
			if c.wireID == id && !c.followedBy(d) {
				s.last = c
				return c
			}
		}
		if named || s.last == nil {
			return s.add()
		}
	}
	if s.last == nil || s.last.followedBy(d) {
		return s.add()
	}
	return s.last
}

// followedBy reports whether d starts a call after c rather than
// continuing it: c has a name and complete object arguments, and d brings
// a function name with the start of an object that neither repeats nor
// extends c's arguments.
// Servers that give parallel calls one index or none, or one id, are told
// apart this way (Ollama: ollama/ollama#15457 and #7881, through
// huggingface/smolagents#1958; LibreChat-AI/agents#260;
// camel-ai/camel#3662).
func (c *callAcc) followedBy(d *toolCallDelta) bool {
	if d.Function.Name == "" || c.name == "" {
		return false
	}
	frag := argumentFragment(d.Function.Arguments)
	cur := c.args.String()
	trimmed := strings.TrimSpace(cur)
	if !strings.HasPrefix(strings.TrimSpace(frag), "{") || trimmed == "" || trimmed[0] != '{' || !json.Valid([]byte(trimmed)) {
		return false
	}
	return frag != cur && !strings.HasPrefix(frag, cur)
}

func (s *callSet) add() *callAcc {
	c := &callAcc{}
	s.calls = append(s.calls, c)
	s.last = c
	return c
}

// apply merges a delta into the call: the first non-empty id wins, name
// fragments are joined (addName), string argument fragments are appended,
// an object or array value is appended JSON-encoded, and a missing or
// empty fragment changes nothing.
func (c *callAcc) apply(d *toolCallDelta) {
	if c.wireID == "" && d.ID != "" {
		c.wireID = string(d.ID)
	}
	c.addName(string(d.Function.Name))
	if len(d.ExtraContent) > 0 && string(d.ExtraContent) != "null" {
		c.extra = append(json.RawMessage(nil), d.ExtraContent...)
	}
	frag := c.newArguments(argumentFragment(d.Function.Arguments))
	c.args.WriteString(frag)
	c.pending += len(frag)
}

// addName joins a name fragment to the name so far. Gemini streams names
// in pieces ("gl", "ob"); Fireworks and MiniMax restate the whole name in
// every delta; some servers send the name so far (snapshots). So:
//   - a fragment equal to the name so far is a restatement;
//   - a fragment that extends the name so far is a snapshot and replaces it;
//   - anything else is appended.
func (c *callAcc) addName(frag string) {
	switch {
	case frag == "" || frag == c.name:
	case strings.HasPrefix(frag, c.name):
		c.name = frag
	default:
		c.name += frag
	}
}

// ready reports whether the call may start streaming: its name is complete
// once arguments arrive (a name may come in pieces before them).
func (c *callAcc) ready() bool {
	return c.started || (c.name != "" && c.args.Len() > 0)
}

// newArguments returns the part of a fragment that is new. Most servers
// send increments; some resend the arguments so far in every delta
// (DeepSeek through Baidu Qianfan, NousResearch/hermes-agent#35718; the
// ChatGPT web backend, icoretech/codex-pooler#193) or repeat the complete
// arguments once more at the end (lidge-jun/opencodex#361). A fragment that
// extends everything received so far is such a snapshot: only its new tail
// counts. A fragment equal to complete (valid JSON) arguments received so
// far is a resend and adds nothing. Anything else is an increment, so
// legitimate fragments that merely start like the text so far
// ({"a":"x then x"}) are kept whole.
func (c *callAcc) newArguments(frag string) string {
	cur := c.args.String()
	switch {
	case frag == "" || cur == "":
		return frag
	case len(frag) > len(cur) && strings.HasPrefix(frag, cur):
		c.cumulative = true
		return frag[len(cur):]
	case frag == cur && (c.cumulative || json.Valid([]byte(cur))):
		return ""
	}
	return frag
}

func argumentFragment(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// takePending returns the argument text not yet emitted.
func (c *callAcc) takePending() string {
	if c.pending == 0 {
		return ""
	}
	s := c.args.String()
	frag := s[len(s)-c.pending:]
	c.pending = 0
	return frag
}

// ensureID gives the call a unique event id: the id as sent, or a
// generated one when the provider sent none or reused one.
func (c *callAcc) ensureID(used map[string]bool) {
	if c.eventID != "" {
		return
	}
	id := c.wireID
	if id == "" {
		id = "call_" + strconv.Itoa(len(used)+1)
	}
	for n := 2; used[id]; n++ {
		id = c.wireID + "_" + strconv.Itoa(n)
		if c.wireID == "" {
			id = "call_" + strconv.Itoa(len(used)+n)
		}
	}
	used[id] = true
	c.eventID = id
}

// toolCall finishes the call: empty arguments become {}, invalid JSON is
// kept raw and marked, and the name is resolved against the offered tools.
func (c *callAcc) toolCall(tools []ToolDef) ToolCall {
	tc := ToolCall{
		ID:         c.eventID,
		Name:       resolveToolName(c.name, tools),
		NameAsSent: c.name,
	}
	if len(c.extra) > 0 {
		tc.ProviderMetadata = c.extra
	}
	raw := strings.TrimSpace(c.args.String())
	switch {
	case raw == "":
		tc.Arguments = json.RawMessage(`{}`)
	case json.Valid([]byte(raw)):
		tc.Arguments = unwrapStringArguments(json.RawMessage(raw))
	default:
		tc.ArgumentsInvalid = true
		tc.ArgumentsRaw = c.args.String()
	}
	return tc
}

// unwrapStringArguments undoes double encoding: a JSON string whose content
// is itself a JSON object becomes that object.
func unwrapStringArguments(raw json.RawMessage) json.RawMessage {
	if raw[0] != '"' {
		return raw
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return raw
	}
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return raw
}

// resolveToolName resolves a name as sent by exact match, then by a unique
// case-insensitive match to an offered tool; otherwise it returns the name
// unchanged (the caller answers with an unknown-tool error).
func resolveToolName(name string, tools []ToolDef) string {
	for _, t := range tools {
		if t.Name == name {
			return name
		}
	}
	match := ""
	for _, t := range tools {
		if strings.EqualFold(t.Name, name) {
			if match != "" {
				return name // ambiguous
			}
			match = t.Name
		}
	}
	if match != "" {
		return match
	}
	return name
}
