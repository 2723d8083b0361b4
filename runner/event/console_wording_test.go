package event

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/golden"
)

// cutRun is a run whose second step is cut by the timeout after a retry
// and two denials worded as tools/permission words them.
func cutRun() []Payload {
	rule := `bash "rm *": deny`
	return []Payload{
		RunStarted{Task: "cut", Model: "m", Limits: Limits{Timeout: "1m"}},
		StepStarted{Step: 1},
		Retry{Step: 1, Attempt: 1, ErrorClass: "retryable", DelayMS: 2000,
			Error: "provider error (retryable, HTTP 503): overloaded"},
		ToolStarted{Step: 1, CallID: "a", Tool: "bash", Input: []byte(`{"command":"rm -rf /"}`)},
		PermissionDenied{Step: 1, CallID: "a", Tool: "bash", Permission: "bash", Pattern: "rm -rf /",
			Reason: `command "rm -rf /": no rule allows bash "rm -rf /" (default deny)`},
		ToolFailed{Step: 1, CallID: "a", Tool: "bash", Error: "permission denied", Denied: true},
		ToolStarted{Step: 1, CallID: "b", Tool: "bash", Input: []byte(`{"command":"rm -r x"}`)},
		PermissionDenied{Step: 1, CallID: "b", Tool: "bash", Permission: "bash", Pattern: "rm -r x", Rule: &rule,
			Reason: `command "rm -r x": denied by rule bash "rm *": deny`},
		ToolFailed{Step: 1, CallID: "b", Tool: "bash", Error: "permission denied", Denied: true},
		StepFinished{Step: 1, FinishReason: "tool-calls", DurationMS: 10},
		StepStarted{Step: 2},
		StepFinished{Step: 2, FinishReason: "error", DurationMS: 60_000},
		Patch{Tree: "aa"},
		RunFinished{Status: StatusTimeout, ExitCode: 1, Steps: 2, DurationMS: 60_100,
			Error: &RunError{Class: "timeout", Message: "the run's timeout (1m0s, --timeout) was reached"}},
	}
}

func TestConsoleCutGolden(t *testing.T) {
	var b bytes.Buffer
	c := NewConsole(&b, ConsoleOptions{RetryAttempts: 5})
	for _, p := range cutRun() {
		if err := c.Emit(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "console_cut_plain.txt"), b.Bytes())
	out := b.String()
	for _, bad := range []string{"retryable: provider error (retryable", "default deny: ", "deny: command", "timeout: the run's timeout", "step 2: error"} {
		if strings.Contains(out, bad) {
			t.Errorf("console repeats itself (%q):\n%s", bad, out)
		}
	}
	if strings.Index(out, "step 2: cut short by the timeout") > strings.Index(out, "Changes:") {
		t.Errorf("the cut step is not shown before the changes:\n%s", out)
	}
}

// TestConsoleErrorStepNotCut: a step that ended in error in a run that
// failed otherwise keeps its reason, in its place.
func TestConsoleErrorStepNotCut(t *testing.T) {
	var b bytes.Buffer
	c := NewConsole(&b, ConsoleOptions{})
	for _, p := range []Payload{
		StepStarted{Step: 1}, StepFinished{Step: 1, FinishReason: "error"}, StepStarted{Step: 2},
		StepFinished{Step: 2, FinishReason: "error"}, Patch{Tree: "x"},
		RunFinished{Status: StatusError, Error: &RunError{Class: "fatal", Message: "provider error (fatal, HTTP 401): bad key"}},
	} {
		if err := c.Emit(p); err != nil {
			t.Fatal(err)
		}
	}
	out := b.String()
	if strings.Count(out, ": error ·") != 2 || strings.Contains(out, "cut short") ||
		strings.Index(out, "step 2: error") > strings.Index(out, "Changes:") {
		t.Errorf("unexpected output:\n%s", out)
	}
	if !strings.Contains(out, "  provider error (fatal, HTTP 401): bad key\n") {
		t.Errorf("the run's error is not said once:\n%s", out)
	}
}

func TestDenialText(t *testing.T) {
	rule := `edit ".github/**": deny`
	tests := []struct {
		v    PermissionDenied
		want string
	}{
		{PermissionDenied{Permission: "bash", Pattern: "rm -rf /",
			Reason: `command "rm -rf /": no rule allows bash "rm -rf /" (default deny)`},
			`bash "rm -rf /": no rule allows it (default deny)`},
		{PermissionDenied{Permission: "bash", Pattern: "rm -rf /", Reason: `no rule allows bash "rm -rf /" (default deny)`},
			`bash "rm -rf /": no rule allows it (default deny)`},
		{PermissionDenied{Permission: "edit", Pattern: ".github/x.yml", Rule: &rule,
			Reason: `denied by rule edit ".github/**": deny`},
			`edit ".github/x.yml" by rule edit ".github/**": deny`},
		// A reason about another subject (a redirect's target) is kept.
		{PermissionDenied{Permission: "edit", Pattern: "/etc/x",
			Reason: `redirect "> /etc/x": /etc/x is outside the work tree`},
			`edit "/etc/x": redirect "> /etc/x": /etc/x is outside the work tree`},
		{PermissionDenied{Permission: "bash", Pattern: "x"}, `bash "x": no rule allows it (default deny)`},
	}
	for _, tt := range tests {
		if got := denialText(tt.v); got != tt.want {
			t.Errorf("denialText(%+v)\n got %s\nwant %s", tt.v, got, tt.want)
		}
	}
}

func TestSayOnce(t *testing.T) {
	tests := []struct{ label, msg, want string }{
		{"cancelled", "cancelled (SIGTERM)", "cancelled (SIGTERM)"},
		{"retryable", "provider error (retryable, HTTP 503): x", "provider error (retryable, HTTP 503): x"},
		{"checks", "check tests failed", "checks: check tests failed"},
		{"timeout", "", "timeout"},
		{"", "msg", "msg"},
	}
	for _, tt := range tests {
		if got := SayOnce(tt.label, tt.msg); got != tt.want {
			t.Errorf("SayOnce(%q, %q) = %q, want %q", tt.label, tt.msg, got, tt.want)
		}
	}
}

// TestConsoleIgnoredWritten: under "Changes:" the console names the
// first five files written in ignored paths (their names are the
// commands': control characters dropped; under Actions inside
// stop-commands, so a name cannot be a workflow command) and counts the
// rest.
func TestConsoleIgnoredWritten(t *testing.T) {
	w := &IgnoredWritten{Paths: []string{"a", "b", "c", "d", "e\x1b[2Jx", "f"}, Total: 9}
	for _, gha := range []bool{false, true} {
		var b bytes.Buffer
		c := NewConsole(&b, ConsoleOptions{GitHubActions: gha})
		for _, p := range []Payload{Patch{Tree: "aa", IgnoredWritten: w}, RunFinished{Status: StatusSuccess}} {
			if err := c.Emit(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		want := "⚠ not in the patch: 9 ignored paths written, left in the work tree: a, b, c, d, e[2Jx, and 4 more\n"
		if !strings.Contains(out, want) || strings.Contains(out, "\x1b") || strings.Index(out, "Changes:") > strings.Index(out, want) {
			t.Errorf("actions %v: console lacks %q under Changes:\n%s", gha, want, out)
		}
		if gha && !strings.Contains(out[:strings.Index(out, want)], "::stop-commands::") {
			t.Errorf("the names are not inside stop-commands:\n%s", out)
		}
	}
}

// TestConsoleRetryOfEventAttempts: the retry line counts against the
// event's own max_attempts (1 for an unreachable endpoint), not the
// backoff's, so it never says "1/5" before "gave up after 1 retry".
func TestConsoleRetryOfEventAttempts(t *testing.T) {
	for _, c := range []struct {
		max  int
		want string
	}{{1, "↻ retry 1/1 in 2.0s"}, {0, "↻ retry 1/5 in 2.0s"}} {
		var b bytes.Buffer
		con := NewConsole(&b, ConsoleOptions{RetryAttempts: 5})
		for _, p := range []Payload{
			RunStarted{Task: "t", Model: "m"},
			StepStarted{Step: 1},
			Retry{Step: 1, Attempt: 1, ErrorClass: "retryable", DelayMS: 2000, MaxAttempts: c.max, Error: "cannot reach the model endpoint"},
		} {
			if err := con.Emit(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := con.Close(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("max_attempts %d: console lacks %q:\n%s", c.max, c.want, b.String())
		}
	}
}
