package llm

import (
	"encoding/json"
)

// reasoningDetails collects OpenRouter's streamed reasoning_details. Each
// chunk carries an array of fragments; fragments with the same index and
// type are one detail streamed in pieces, so their text fields ("text",
// "summary", "data") are concatenated and their other fields (signature,
// format, id) take the latest non-empty value. Everything else is kept as
// sent, so the result can go back on the next request.
type reasoningDetails struct {
	items []map[string]any
}

func (r *reasoningDetails) add(raw json.RawMessage) {
	if len(raw) == 0 || raw[0] != '[' {
		return
	}
	var frags []map[string]any
	if json.Unmarshal(raw, &frags) != nil {
		return
	}
	for _, f := range frags {
		if f == nil {
			continue
		}
		if last := r.last(); last != nil && sameDetail(last, f) {
			mergeDetail(last, f)
			continue
		}
		r.items = append(r.items, f)
	}
}

func (r *reasoningDetails) last() map[string]any {
	if len(r.items) == 0 {
		return nil
	}
	return r.items[len(r.items)-1]
}

func sameDetail(a, b map[string]any) bool {
	ai, aok := a["index"]
	bi, bok := b["index"]
	return aok && bok && ai == bi && a["type"] == b["type"]
}

func mergeDetail(dst, src map[string]any) {
	for k, v := range src {
		if isTextField(k) {
			if s, ok := v.(string); ok {
				prev, _ := dst[k].(string)
				dst[k] = prev + s
				continue
			}
		}
		if v == nil || v == "" {
			continue
		}
		dst[k] = v
	}
}

// isTextField reports whether a fragment member is streamed in pieces.
func isTextField(k string) bool {
	return k == "text" || k == "summary" || k == "data"
}

// json returns the collected details as a JSON array, or nil when none came.
func (r *reasoningDetails) json() json.RawMessage {
	if len(r.items) == 0 {
		return nil
	}
	b, err := json.Marshal(r.items)
	if err != nil {
		return nil
	}
	return b
}
