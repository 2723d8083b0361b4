package llm

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// optionalMembers are the body members the client adds on its own, not
// because the request asked for them: usage in streams, store: false, an
// explicit tool_choice "auto" (the default when tools are sent), and
// sampling or reasoning values that only the profile supplies. An endpoint
// that rejects one by name is sent the request again without it.
func optionalMembers(req Request, prof Profile) []string {
	out := []string{"stream_options"}
	if prof.StoreFalse {
		out = append(out, "store")
	}
	if len(req.Tools) > 0 && req.ToolChoice == ToolChoiceAuto {
		out = append(out, "tool_choice")
	}
	if !prof.NoSampling && req.Temperature == nil && prof.Temperature != nil {
		out = append(out, "temperature")
	}
	if !prof.NoSampling && req.TopP == nil && prof.TopP != nil {
		out = append(out, "top_p")
	}
	if k, _ := reasoningMember(prof, req.ReasoningEffort); k != "" && req.ReasoningEffort == "" {
		out = append(out, k)
	}
	return out
}

// rejectionWords are how endpoints say a request member is unknown or
// unsupported: OpenAI (unknown_parameter, unsupported_parameter), Azure
// OpenAI ("Unrecognized request argument supplied"), Google APIs ("Unknown
// name … Cannot find field"), pydantic servers (extra_forbidden, "Extra
// inputs are not permitted"), JSON Schema validators ("Additional
// properties are not allowed"), Groq ("property … is unsupported"),
// LiteLLM ("does not support parameters") and Python handlers ("unexpected
// keyword argument").
var rejectionWords = []string{
	"unknown parameter", "unknown_parameter", "unsupported parameter", "unsupported_parameter",
	"unrecognized request argument", "unrecognized parameter", "unrecognized field",
	"unknown name", "unknown field", "cannot find field",
	"extra inputs are not permitted", "extra_forbidden", "additional properties are not allowed",
	"is unsupported", "not supported", "does not support parameters",
	"unexpected keyword argument", "unexpected field",
}

// rejectedMember returns the optional member a 400 or 422 names as unknown
// or unsupported, or "" when it names none of sent.
func rejectedMember(status int, b errorBody, sent []string) string {
	if status != 400 && status != 422 {
		return ""
	}
	text := strings.ToLower(b.Code + " " + b.Type + " " + b.Message)
	if !slices.ContainsFunc(rejectionWords, func(w string) bool { return strings.Contains(text, w) }) {
		return ""
	}
	param := strings.ToLower(b.Param)
	for _, m := range sent {
		if hasToken(param, m) {
			return m
		}
	}
	for _, m := range sent {
		if hasToken(text, m) {
			return m
		}
	}
	return ""
}

// hasToken reports whether s holds name not as part of a longer
// identifier ("stream_options" in "body.stream_options", not "store" in
// "restore").
func hasToken(s, name string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !identByte(s[j-1])) && (end == len(s) || !identByte(s[end])) {
			return true
		}
		i = j + 1
	}
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// renamable are members whose value the request asked for but whose
// name the client chose: OpenAI's reasoning models take only
// max_completion_tokens, and older servers (Azure before 2024-09-01-preview,
// many compatible ones) only max_tokens. maxTokensField guesses from the
// model name, which a gateway's alias hides.
var renamable = map[string]string{"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}

// droppedMembers are the optional members an endpoint rejected, and the
// members it took under their other name; later requests through the same
// provider leave out the first and rename the second. Safe for concurrent use.
type droppedMembers struct {
	mu      sync.Mutex
	set     map[string]bool
	renamed map[string]string // rejected name → name sent instead
}

// adapt applies what the endpoint rejected before to a request being
// built, and returns the members a rejection may name: the optional
// members still sent and the renamable ones present (not already renamed
// once: no ping-pong between two names).
func (d *droppedMembers) adapt(oreq *openai.ChatCompletionRequest, patch map[string]json.RawMessage, optional []string) []string {
	keep, drop := d.filter(optional)
	for _, m := range drop {
		omitMember(oreq, patch, m)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for from, to := range d.renamed {
		if v, ok := patch[from]; ok {
			delete(patch, from)
			patch[to] = v
		}
	}
	for m := range renamable {
		if _, ok := patch[m]; ok && !slices.Contains(slices.Collect(maps.Values(d.renamed)), m) {
			keep = append(keep, m)
		}
	}
	slices.Sort(keep)
	return keep
}

// rejected records that the endpoint rejected member m, and returns what
// the next request does instead, for the error message.
func (d *droppedMembers) rejected(m string) string {
	if to, ok := renamable[m]; ok {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.renamed == nil {
			d.renamed = map[string]string{}
		}
		d.renamed[m] = to
		return "with " + to + " instead of " + m
	}
	d.add(m)
	return "without " + m
}

func (d *droppedMembers) add(m string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.set == nil {
		d.set = map[string]bool{}
	}
	d.set[m] = true
}

// filter returns the members of sent not dropped, and the dropped ones.
func (d *droppedMembers) filter(sent []string) (keep, drop []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range sent {
		if d.set[m] {
			drop = append(drop, m)
		} else {
			keep = append(keep, m)
		}
	}
	return keep, drop
}

// omitMember leaves a dropped member out of a request being built.
func omitMember(oreq *openai.ChatCompletionRequest, patch map[string]json.RawMessage, m string) {
	if m == "stream_options" {
		oreq.StreamOptions = nil
		return
	}
	delete(patch, m)
}
