package event

import (
	"encoding/json"
	"time"
)

func ptr[T any](v T) *T { return &v }

// fixedClock returns a clock that starts at 2026-01-02T03:04:05Z and moves
// 250ms per call.
func fixedClock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(250 * time.Millisecond)
		return t
	}
}

// sampleRun is one event of every type, in the order of a run.
func sampleRun() []Payload {
	return []Payload{
		RunStarted{Task: "fix-tests", SpecPath: "task.yaml", SpecSHA256: "ab12", Repo: "/src/repo",
			BaseTree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", Model: "gpt-4.1-mini",
			BaseURL: "https://api.openai.com/v1", RunnerVersion: "v0.1.0",
			Inputs: map[string]string{"package": "./..."}, Limits: Limits{MaxSteps: 40, MaxCostUSD: 2, Timeout: "20m"}},
		StepStarted{Step: 1},
		Reasoning{Step: 1, Text: "Look at the failing test first."},
		Text{Step: 1, Text: "I will run the tests.\n::warning::not a command"},
		ToolStarted{Step: 1, CallID: "call_1", Tool: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)},
		ToolCompleted{Step: 1, CallID: "call_1", Tool: "bash", Output: "FAIL\tpkg 0.01s\n", DurationMS: 1200,
			Metadata: map[string]any{"exit_code": 1}},
		ToolStarted{Step: 1, CallID: "call_2", Tool: "bash", Input: json.RawMessage(`{"command":"rm -rf /"}`)},
		PermissionDenied{Step: 1, CallID: "call_2", Tool: "bash", Permission: "bash", Pattern: "rm -rf /",
			Rule: nil, Reason: "no allow rule matches"},
		ToolFailed{Step: 1, CallID: "call_2", Tool: "bash", Error: "permission denied", Denied: true},
		ToolStarted{Step: 1, CallID: "call_3", Tool: "read", ToolAsSent: "Read", InputRaw: `{"path":`},
		ToolFailed{Step: 1, CallID: "call_3", Tool: "read", Error: "invalid arguments", DurationMS: 0},
		StepFinished{Step: 1, FinishReason: "tool-calls", Tokens: Tokens{Input: 1200, Output: 80, CacheRead: 1000},
			CostUSD: ptr(0.0012), DurationMS: 2300},
		Retry{Step: 2, Attempt: 1, ErrorClass: "rate_limit", Error: "429 Too Many Requests", DelayMS: 1500},
		StepStarted{Step: 2},
		Compaction{Step: 2, Reason: "overflow", TokensBefore: 120000},
		Patch{Step: ptr(2), Tree: "aa11", Files: []FileChange{{Path: "a.go", Status: "modified", Additions: 2, Deletions: 1}}, Additions: 2, Deletions: 1},
		StepFinished{Step: 2, FinishReason: "stop", Tokens: Tokens{Input: 1500, Output: 40, Reasoning: 10}, DurationMS: 900},
		CheckStarted{Name: "tests", Command: "go test ./...", Attempt: 1},
		CheckFinished{Name: "tests", Command: "go test ./...", Attempt: 1, ExitCode: 0, Passed: true, Output: "ok", DurationMS: 3000},
		Patch{Tree: "bb22", Files: []FileChange{
			{Path: "a.go", Status: "modified", Additions: 2, Deletions: 1},
			{Path: "b.go", OldPath: "old_b.go", Status: "renamed"},
			{Path: "logo.png", Status: "added", Binary: true},
		}, Additions: 2, Deletions: 1},
		Publish{Target: PublishPullRequest, OK: true, URL: "https://github.com/o/r/pull/3"},
		RunFinished{Status: StatusSuccess, FinalMessage: "Fixed the off-by-one in a.go.", Steps: 2,
			Tokens: Tokens{Input: 2700, Output: 120, Reasoning: 10, CacheRead: 1000}, CostUSD: ptr(0.0031),
			DurationMS: 9000, PatchPath: "out/changes.patch", FilesChanged: 3},
	}
}
