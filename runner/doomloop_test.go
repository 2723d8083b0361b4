package runner

import (
	"encoding/json"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

func TestTrackCall(t *testing.T) {
	t.Parallel()
	s := NewSession(Config{Model: newModel()})
	c := func(name, args string) *llm.ToolCall {
		return &llm.ToolCall{Name: name, Arguments: json.RawMessage(args)}
	}
	steps := []struct {
		call *llm.ToolCall
		want bool
	}{
		{c("read", `{"a":1,"b":2}`), false},
		{c("read", `{"b":2, "a":1}`), false},
		{c("read", `{"a":1,"b":2}`), true},
		{c("read", `{"a":1,"b":2}`), true},
		{c("grep", `{"a":1,"b":2}`), false},
		{c("read", `{"a":1,"b":2}`), false},
	}
	for i, st := range steps {
		if got := s.trackCall(st.call); got != st.want {
			t.Errorf("call %d: repeated=%v, want %v", i, got, st.want)
		}
	}
}
