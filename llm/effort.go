package llm

import (
	"fmt"
	"slices"
	"strings"
)

// ReasoningEfforts lists the reasoning efforts a task may ask for, on any
// wire, from least to most.
func ReasoningEfforts() []string {
	return []string{"none", "minimal", "low", "medium", "high", "xhigh"}
}

// Efforts lists the reasoning efforts the wire sends, from least to most.
//   - chat: reasoning_effort, every value OpenAI documents (none and xhigh
//     on the models that take them); profiles map or drop them per vendor.
//   - responses: reasoning.effort, the same values, on reasoning models.
//   - anthropic: a thinking budget (thinkingBudget); none sends no thinking.
//     xhigh has no budget that fits every Claude model's output cap.
func (w Wire) Efforts() []string {
	if w == WireAnthropic {
		return []string{"none", "minimal", "low", "medium", "high"}
	}
	return ReasoningEfforts()
}

// CheckEffort refuses a reasoning effort the wire cannot send; "" is
// always accepted (none asked).
func (w Wire) CheckEffort(effort string) error {
	if effort == "" || slices.Contains(w.Efforts(), effort) {
		return nil
	}
	return fmt.Errorf("reasoning_effort %q: the %s wire takes %s", effort, w, strings.Join(w.Efforts(), ", "))
}
