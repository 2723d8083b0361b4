package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/golden"
)

// failedRun is a run that ends with a failing check and an error.
func failedRun() []Payload {
	long := strings.Repeat("line\n", 14)
	var out strings.Builder
	for i := 1; i <= 25; i++ {
		fmt.Fprintf(&out, "--- FAIL: TestX%d\n", i)
	}
	return []Payload{
		RunStarted{Task: "evil\n::set-output name=x::1", Model: "m"},
		StepStarted{Step: 1},
		Text{Step: 1, Text: "\x1b[31mred\x1b[0m and ::add-mask::x\n" + long},
		ToolStarted{Step: 1, CallID: "a", Tool: "grep", Input: json.RawMessage(`{"pattern":"func\tMain\n","path":"."}`)},
		ToolStarted{Step: 1, CallID: "b", Tool: "write", Input: json.RawMessage(`{"path":".github/workflows/x.yml","content":"..."}`)},
		PermissionDenied{Step: 1, CallID: "b", Tool: "write", Permission: "edit", Pattern: ".github/workflows/x.yml",
			Rule: ptr(`edit ".github/**": deny`), Reason: "matched a deny rule"},
		ToolFailed{Step: 1, CallID: "b", Tool: "write", Error: "permission denied", Denied: true},
		ToolCompleted{Step: 1, CallID: "a", Tool: "grep", Output: "x", Truncated: true, DurationMS: 15},
		ToolCompleted{Step: 1, CallID: "unknown", Tool: "list", DurationMS: 61_000},
		StepFinished{Step: 1, FinishReason: "stop", Tokens: Tokens{Input: 2_500_000, Output: 999}, CostUSD: ptr(1.5), DurationMS: 3_700_000},
		CheckStarted{Name: "tests", Command: "go test ./...", Attempt: 2},
		CheckFinished{Name: "tests", Command: "go test ./...", Attempt: 2, ExitCode: 1, Output: out.String(), DurationMS: 4200},
		Publish{Target: PublishComment, Error: "POST comments: 500 Internal Server Error\n::error::x"},
		RunFinished{Status: StatusFailed, ExitCode: 1, Steps: 1, Tokens: Tokens{Input: 2_500_000, Output: 999},
			CostUSD: ptr(1.5), DurationMS: 3_800_000, Error: &RunError{Class: "checks_failed", Message: "check tests failed\n::error::boom"}},
	}
}

func TestConsoleGolden(t *testing.T) {
	scenarios := map[string][]Payload{"success": sampleRun(), "failed": failedRun()}
	opts := map[string]ConsoleOptions{
		"plain": {},
		"tty":   {TTY: true, Color: true},
		"gha":   {GitHubActions: true, StopToken: "TOKEN123"},
		"quiet": {Quiet: true},
	}
	for sname, events := range scenarios {
		for oname, o := range opts {
			t.Run(sname+"_"+oname, func(t *testing.T) {
				var b bytes.Buffer
				c := NewConsole(&b, o)
				for _, p := range events {
					if err := c.Emit(p); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				if o.GitHubActions {
					checkWorkflowCommands(t, b.String(), "TOKEN123")
				}
				golden.Check(t, filepath.Join("testdata", "console_"+sname+"_"+oname+".txt"), b.Bytes())
			})
		}
	}
}

// checkWorkflowCommands fails when a line outside ::stop-commands:: could
// be read as a workflow command other than our own group markers, or when
// groups and stop-commands blocks are not balanced.
// ourAnnotation is an annotation line the console writes under Actions.
var ourAnnotation = regexp.MustCompile(`^::(error|warning|notice) title=runner[^:]*::`)

func checkWorkflowCommands(t *testing.T, out, token string) {
	t.Helper()
	stopped, grouped := false, false
	for i, line := range strings.Split(out, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case stopped && trim == "::"+token+"::":
			stopped = false
		case stopped:
		case trim == "::stop-commands::"+token:
			stopped = true
		case strings.HasPrefix(trim, "::group::"):
			if grouped {
				t.Errorf("line %d: nested group", i+1)
			}
			grouped = true
		case trim == "::endgroup::":
			grouped = false
		case ourAnnotation.MatchString(line):
			// one of the runner's own annotations (workflowcmd escapes its
			// message, so it cannot hold a second command)
		case strings.Contains(line, "::"):
			t.Errorf("line %d: %q outside stop-commands", i+1, line)
		}
	}
	if stopped || grouped {
		t.Errorf("unbalanced at end: stopped=%v grouped=%v", stopped, grouped)
	}
}

func TestConsoleRandomToken(t *testing.T) {
	a, b := NewConsole(&bytes.Buffer{}, ConsoleOptions{}), NewConsole(&bytes.Buffer{}, ConsoleOptions{})
	if a.token == b.token || len(a.token) < 20 {
		t.Errorf("tokens %q and %q are not random enough", a.token, b.token)
	}
}

func TestConsoleConcurrent(t *testing.T) {
	var b bytes.Buffer
	c := NewConsole(&b, ConsoleOptions{TTY: true})
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 50 {
				id := fmt.Sprintf("%d-%d", g, i)
				_ = c.Emit(ToolStarted{Step: 1, CallID: id, Tool: "read", Input: json.RawMessage(`{"path":"x"}`)})
				_ = c.Emit(ToolCompleted{Step: 1, CallID: id, Tool: "read"})
			}
		}()
	}
	for range 4 {
		<-done
	}
	if got := strings.Count(b.String(), "✓"); got != 200 {
		t.Errorf("%d completed lines, want 200", got)
	}
	if err := c.Emit(nil); err == nil {
		t.Error("nil accepted")
	}
	if err := NewConsole(failWriter{}, ConsoleOptions{}).Emit(StepStarted{Step: 1}); err == nil {
		t.Error("write error lost")
	}
}

func TestFormatHelpers(t *testing.T) {
	tests := []struct{ got, want string }{
		{FormatMS(0), "0ms"}, {FormatMS(999), "999ms"}, {FormatMS(1250), "1.2s"},
		{FormatMS(62_000), "1m02s"}, {FormatMS(75_000), "1m15s"}, {FormatMS(3_723_000), "1h02m"}, {FormatMS(3_725_000), "1h02m"},
		{formatCount(999), "999"}, {formatCount(1250), "1.2k"}, {formatCount(2_500_000), "2.5M"},
		{FormatCost(0.00312), "$0.0031"}, {FormatCost(12.345), "$12.35"},
		{sanitize("a\x1b[2Jb\tc\x07", 10), "a[2Jb c"}, {sanitize("abcdef", 3), "abc…"}, {sanitize("a\u202Eb", 5), "ab"},
		{oneLine(" x\r\ny ", 20), "x ⏎ y"}, {diffstat(1, 2, 3), "1 file, +2 -3"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestConsoleNetworkLine: an allowed host that could not be reached says
// why (the first upstream error), control characters and all made safe;
// a denied one says how to allow it.
func TestConsoleNetworkLine(t *testing.T) {
	var b strings.Builder
	c := NewConsole(&b, ConsoleOptions{})
	for _, a := range []NetworkAccess{
		{Host: "registry.test", Port: 443, Allowed: true, Requests: 2, Failed: 1, Error: "lookup registry.test: no such host\x1b[2J"},
		{Host: "ok.test", Port: 80, Allowed: true, Requests: 1},
		{Host: "evil.test", Port: 443, Requests: 1},
	} {
		if err := c.Emit(a); err != nil {
			t.Fatal(err)
		}
	}
	want := "network: allowed registry.test:443 (2 requests), 1 unreachable: lookup registry.test: no such host[2J\n" +
		"network: allowed ok.test:80 (1 request)\n" +
		"network: denied evil.test:443 (1 request): add it to sandbox.network.allow to allow it\n"
	if b.String() != want {
		t.Errorf("console:\n%s\nwant:\n%s", b.String(), want)
	}
}
