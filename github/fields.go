package github

import (
	_ "embed"
	"reflect"
	"slices"
	"strings"
)

// ContextFields are the fields a task template reads as {{ .GitHub.X }}:
// the exported fields of Context, in declaration order (CamelCase:
// .GitHub.Repository, not .GitHub.repository).
func ContextFields() []string {
	t := reflect.TypeOf(Context{})
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		out = append(out, t.Field(i).Name)
	}
	return out
}

// eventFieldsText is event_fields.txt: one line per event payload key
// path ("pull_request.head.ref") of the events the runner handles, taken
// from the payload fixtures in testdata/events (a test keeps the two
// equal; regenerate with go test ./github -run TestEventFields -update).
//
//go:embed event_fields.txt
var eventFieldsText string

// OpenEventMaps are payload keys whose members are named by the workflow
// or the sender (workflow_dispatch inputs, repository_dispatch
// client_payload): any key below them is accepted.
func OpenEventMaps() []string { return []string{"inputs", "client_payload"} }

// EventFields are the key paths of the event payloads, sorted: what a
// template may read as {{ .Event.a.b }}. Members of arrays are not listed
// (a template reaches them with range, where the dot is the member).
func EventFields() []string {
	var out []string
	for _, line := range strings.Split(eventFieldsText, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// EventFieldsOf returns the key paths of one decoded payload, sorted, for
// event_fields.txt.
func EventFieldsOf(payload map[string]any) []string {
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			p := prefix + k
			out = append(out, p)
			if slices.Contains(OpenEventMaps(), p) {
				continue
			}
			if sub, ok := v.(map[string]any); ok {
				walk(p+".", sub)
			}
		}
	}
	walk("", payload)
	slices.Sort(out)
	return out
}
