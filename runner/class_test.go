package runner

import (
	"testing"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
)

// TestProviderClassesAgree: the event package's copies of the llm error
// classes are the values the loop writes for a provider failure.
func TestProviderClassesAgree(t *testing.T) {
	for _, c := range []struct {
		llm   llm.ErrorClass
		event event.ErrorClass
	}{
		{llm.ClassRetryable, event.ClassRetryable},
		{llm.ClassContextOverflow, event.ClassContextOverflow},
		{llm.ClassFatal, event.ClassFatal},
	} {
		if event.ErrorClass(c.llm) != c.event {
			t.Errorf("llm class %q is event class %q", c.llm, c.event)
		}
	}
}
