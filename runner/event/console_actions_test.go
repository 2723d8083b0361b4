package event

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed43ef5acb/runner/internal/doclink"
)

// TestFinalAnnotationKeepsGateLink: a gate message too long for the
// ::error annotation loses text before its "(see URL)", never the link.
func TestFinalAnnotationKeepsGateLink(t *testing.T) {
	link := "(see " + doclink.URL("gates.md", "git-tripwire") + ")"
	var paths []string
	for i := range 200 {
		paths = append(paths, "hooks/pre-commit-"+strings.Repeat("x", i%7))
	}
	msg := "a command changed " + strings.Join(paths, ", ") +
		" (git would run programs named there); the runner put them back " + link
	if utf8.RuneCountInString(msg) <= annotationErrorRunes {
		t.Fatalf("the message is %d runes: too short to be cut", utf8.RuneCountInString(msg))
	}

	var b bytes.Buffer
	c := NewConsole(&b, ConsoleOptions{GitHubActions: true, StopToken: "TOKEN123"})
	finished := RunFinished{Status: StatusViolation, ExitCode: 1, Error: &RunError{Class: ClassViolation, Message: msg}}
	if err := c.Emit(finished); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var line string
	for l := range strings.SplitSeq(b.String(), "\n") {
		if strings.HasPrefix(l, "::error ") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no ::error annotation:\n%s", b.String())
	}
	_, errPart, ok := strings.Cut(line, " — ")
	if !ok {
		t.Fatalf("the annotation carries no run error: %q", line)
	}
	if n := utf8.RuneCountInString(errPart); n > annotationErrorRunes {
		t.Errorf("the run error in the annotation is %d runes, over %d", n, annotationErrorRunes)
	}
	if !strings.HasSuffix(errPart, "… "+link) {
		t.Errorf("the annotation does not end with the cut text and the whole link %q:\n…%s", link, errPart[max(0, len(errPart)-200):])
	}
	if !strings.HasPrefix(errPart, "violation: a command changed hooks/pre-commit-") {
		t.Errorf("the annotation lost the start of the message: %.80q", errPart)
	}
}

// TestOneLineTrailingLink: a cut keeps a trailing "(see URL)" when text
// still fits before it, and cuts plainly when it does not or there is none.
func TestOneLineTrailingLink(t *testing.T) {
	link := "(see https://example.test/docs/gates.md#secrets)"
	long := strings.Repeat("word ", 100)
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"fits", "short " + link, 200, "short " + link},
		{"keeps link", long + link, 100, strings.Repeat("word ", 10) + "… " + link},
		{"line breaks joined", "a\nb " + long + link, 100, "a ⏎ b " + strings.Repeat("word ", 8) + "word… " + link},
		{"no room for link", long + link, 60, strings.Repeat("word ", 12) + "…"},
		{"no link", long, 20, strings.Repeat("word ", 4) + "…"},
		{"link not trailing", link + " " + long, 20, link[:20] + "…"},
	}
	for _, tt := range tests {
		got := oneLine(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("%s: oneLine = %q, want %q", tt.name, got, tt.want)
		}
		if strings.HasSuffix(tt.want, link) && utf8.RuneCountInString(got) > tt.max {
			t.Errorf("%s: %d runes, over %d", tt.name, utf8.RuneCountInString(got), tt.max)
		}
	}
}
