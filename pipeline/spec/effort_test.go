package spec

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm"
)

// TestReasoningEffort: the key takes llm.ReasoningEfforts() and names the
// allowed values at the key's position otherwise.
func TestReasoningEffort(t *testing.T) {
	t.Parallel()
	base := "version: 1\nname: t\nprompt: p\n"
	for _, v := range llm.ReasoningEfforts() {
		s, err := LoadBytes("task.yaml", []byte(base+"reasoning_effort: "+v+"\n"))
		if err != nil || s.ReasoningEffort != v {
			t.Errorf("%s: effort %q, error %v", v, s.ReasoningEffort, err)
		}
	}
	for _, tc := range []struct{ yaml, wantErr string }{
		{"reasoning_effort: extreme", `reasoning_effort: unknown value "extreme"`},
		{"reasoning_effort: High", `reasoning_effort: unknown value "High"`},
		{"reasoning_effort: ''", "reasoning_effort"},
		{"reasoning_effort: 3", "reasoning_effort"},
	} {
		_, err := LoadBytes("task.yaml", []byte(base+tc.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "task.yaml:4:") {
			t.Errorf("%s: error %v, want %q at line 4", tc.yaml, err, tc.wantErr)
		}
	}
	var doc struct {
		Properties struct {
			Effort struct {
				Enum []string `json:"enum"`
			} `json:"reasoning_effort"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(TaskSchema(), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Properties.Effort.Enum; !slices.Equal(got, llm.ReasoningEfforts()) {
		t.Errorf("task.schema.json reasoning_effort enum %v, llm.ReasoningEfforts() %v", got, llm.ReasoningEfforts())
	}
}
