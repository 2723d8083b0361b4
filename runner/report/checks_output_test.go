package report

import (
	"fmt"
	"strings"
	"testing"
)

// TestFailedCheckOutputInMarkdown: the report shows the tail of a check
// that failed at the end (its last attempt), bounded in lines and bytes,
// fenced so its backticks cannot end the block; passed checks and earlier
// attempts show none.
func TestFailedCheckOutputInMarkdown(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	r := Report{Status: "failed", Checks: []Check{
		{Name: "tests", Attempt: 1, ExitCode: 1, Output: "first attempt output\n"},
		{Name: "lint", Attempt: 1, Passed: true, Output: "lint passed output\n"},
		{Name: "tests", Attempt: 2, ExitCode: 2, Output: "```\n" + long.String()},
		{Name: "huge", Attempt: 1, ExitCode: 1, Output: strings.Repeat("é", 10000)},
	}}
	md := r.Markdown(MarkdownOptions{})
	for _, want := range []string{
		"The last 30 lines of the output of `tests` (exit 2):\n\n```\nline 71\n",
		"line 100\n```\n",
		"of `huge` (exit 1):",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	for _, bad := range []string{"first attempt output", "lint passed output", "line 70\n"} {
		if strings.Contains(md, bad) {
			t.Errorf("summary shows %q:\n%s", bad, md)
		}
	}
	if n := strings.Count(md, "é"); n == 0 || 2*n > checkTailBytes {
		t.Errorf("huge output: %d runes of 2 bytes shown, want 1..%d bytes", n, checkTailBytes)
	}
	short := Report{Status: "failed", Checks: []Check{{Name: "t", ExitCode: 1, Output: "a `x` ```` b\nFAIL\n"}}}.Markdown(MarkdownOptions{})
	if want := "Output of `t` (exit 1):\n\n`````\na `x` ```` b\nFAIL\n`````\n"; !strings.Contains(short, want) {
		t.Errorf("short output not shown whole in a longer fence (%q):\n%s", want, short)
	}
}
