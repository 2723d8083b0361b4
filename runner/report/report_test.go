package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/golden"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

func readRecords(t *testing.T, name string) []event.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := event.ReadLog(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func build(t *testing.T, name string) Report {
	t.Helper()
	r, err := Build(readRecords(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readPatch(t *testing.T) string {
	t.Helper()
	p, err := os.ReadFile(filepath.Join("testdata", "success.patch"))
	if err != nil {
		t.Fatal(err)
	}
	return string(p)
}

func TestInputLogsMatchSchema(t *testing.T) {
	v, err := event.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"success.jsonl", "failed.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := v.ValidateLog(data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestBuild(t *testing.T) {
	r := build(t, "success.jsonl")
	if r.Status != event.StatusSuccess || *r.ExitCode != 0 || r.Steps != 2 || r.Retries != 1 || r.RunID != "run-success" {
		t.Errorf("summary = %+v", r)
	}
	wantTools := []ToolUse{{Name: "bash", Calls: 2, Failed: 1, Denied: 1}, {Name: "edit", Calls: 1},
		{Name: "read", Calls: 1}, {Name: "write", Calls: 1, Failed: 1, Denied: 1}}
	if diff := cmp.Diff(wantTools, r.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if len(r.Denials) != 2 || r.Denials[0].Rule != nil || *r.Denials[1].Rule != `edit ".github/**": deny` {
		t.Errorf("denials = %+v", r.Denials)
	}
	if r.Diff == nil || !r.Diff.Final || len(r.Diff.Files) != 4 || r.Diff.Additions != 13 {
		t.Errorf("diff = %+v", r.Diff)
	}

	inc := build(t, "incomplete.jsonl")
	if inc.Status != StatusIncomplete || inc.ExitCode != nil || inc.Steps != 2 {
		t.Errorf("incomplete = %+v", inc)
	}
	// The truncated last line (step 2's step.finished) is dropped: step 1's totals only.
	if inc.Tokens.Input != 12000 || inc.CostUSD == nil || *inc.CostUSD != 0.0061 || inc.Diff.Final {
		t.Errorf("incomplete totals = %+v cost %v diff %+v", inc.Tokens, inc.CostUSD, inc.Diff)
	}
	if inc.FinalMessage != "Running the tests first." {
		t.Errorf("incomplete final message = %q", inc.FinalMessage)
	}
}

func TestBuildRuns(t *testing.T) {
	recs := append(readRecords(t, "success.jsonl"), readRecords(t, "failed.jsonl")...)
	reps, err := BuildRuns(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 || reps[0].RunID != "run-success" || reps[1].RunID != "run-failed" {
		t.Fatalf("runs = %d", len(reps))
	}
	bad := recs[:1]
	bad[0].Raw = json.RawMessage(`{"task":5}`)
	if _, err := BuildRuns(bad); err == nil {
		t.Error("undecodable record accepted")
	}
	unknown := event.Record{Envelope: event.Envelope{V: 1, Seq: 1, RunID: "r", Type: "future.event"}, Raw: json.RawMessage(`{}`)}
	if r, err := Build([]event.Record{unknown}); err != nil || r.Status != StatusIncomplete {
		t.Errorf("unknown type: %+v, %v", r, err)
	}
}

func TestMarkdownGolden(t *testing.T) {
	patch := readPatch(t)
	tests := []struct {
		name, log string
		opts      MarkdownOptions
	}{
		{"success.md", "success.jsonl", MarkdownOptions{Patch: patch, Footer: "<!-- runner:comment -->"}},
		{"failed.md", "failed.jsonl", MarkdownOptions{Title: "Nightly fix", HeadingLevel: 2}},
		{"incomplete.md", "incomplete.jsonl", MarkdownOptions{}},
		{"success_cut_patch.md", "success.jsonl", MarkdownOptions{Patch: patch + strings.Repeat("+more\n", 400), MaxLen: 3000}},
		{"success_cut_hard.md", "success.jsonl", MarkdownOptions{Patch: patch, MaxLen: 1200, Footer: "[logs](https://example.com/run/1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := build(t, tt.log).Markdown(tt.opts)
			if tt.opts.MaxLen > 0 && len(md) > tt.opts.MaxLen {
				t.Errorf("len %d > MaxLen %d", len(md), tt.opts.MaxLen)
			}
			if tt.opts.Footer != "" && !strings.HasSuffix(md, tt.opts.Footer+"\n") {
				t.Error("footer lost")
			}
			if strings.Count(md, "<details>") != strings.Count(md, "</details>") {
				t.Error("unbalanced <details>")
			}
			golden.Check(t, filepath.Join("testdata", tt.name), []byte(md))
		})
	}
}

func TestMarkdownMaxLenSweep(t *testing.T) {
	r := build(t, "success.jsonl")
	patch := readPatch(t) + strings.Repeat("+x\n", 2000)
	for n := 1000; n < 9000; n += 97 {
		md := r.Markdown(MarkdownOptions{Patch: patch, MaxLen: n})
		if len(md) > n {
			t.Fatalf("MaxLen %d: got %d bytes", n, len(md))
		}
		if !strings.Contains(md, "| **Status** |") {
			t.Fatalf("MaxLen %d: summary lost", n)
		}
		if strings.Count(md, "<details>") != strings.Count(md, "</details>") {
			t.Fatalf("MaxLen %d: unbalanced details", n)
		}
	}
}

func TestMarkdownRedacts(t *testing.T) {
	const secret = "planted-secret-in-final"
	r := build(t, "success.jsonl")
	r.FinalMessage += " " + secret
	r.Denials[0].Pattern = "echo " + secret
	red := event.NewRedactor([]string{"MY_TOKEN=" + secret})
	md := r.Markdown(MarkdownOptions{Patch: "+" + secret + "\n", Redactor: red})
	if strings.Contains(md, secret) {
		t.Errorf("secret in markdown:\n%s", md)
	}
	// final message, the denial's note and table row, the patch
	if strings.Count(md, event.Redacted) != 4 {
		t.Errorf("want 4 redactions:\n%s", md)
	}
}

func TestJSONGolden(t *testing.T) {
	for _, name := range []string{"success", "incomplete"} {
		b, err := build(t, name+".jsonl").JSON()
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", name+".json"), b)
	}
}

func TestWriteOut(t *testing.T) {
	dir := t.TempDir()
	logData, err := os.ReadFile(filepath.Join("testdata", "success.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, outdir.EventsFile), logData, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, outdir.PatchFile), []byte(readPatch(t)), 0o644))
	rep, err := WriteOut(t.Context(), dir, MarkdownOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != event.StatusSuccess {
		t.Errorf("status %q", rep.Status)
	}
	res, err := os.ReadFile(filepath.Join(dir, outdir.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(logData), []byte("\n"))
	var compact bytes.Buffer
	must(t, json.Compact(&compact, res))
	if !bytes.Equal(compact.Bytes(), lines[len(lines)-1]) {
		t.Errorf("result.json is not the run.finished line:\n%s", res)
	}
	v, err := event.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(res); err != nil {
		t.Errorf("result.json: %v", err)
	}
	sum, err := os.ReadFile(filepath.Join(dir, outdir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "<details><summary>Patch") {
		t.Error("summary.md has no patch section from changes.patch")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("out dir holds %d files, want 4 (no temp files left)", len(entries))
	}
}

func TestWriteOutErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteOut(t.Context(), dir, MarkdownOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing log: %v", err)
	}
	must(t, os.WriteFile(filepath.Join(dir, outdir.EventsFile), nil, 0o644))
	if _, err := WriteOut(t.Context(), dir, MarkdownOptions{}); !errors.Is(err, ErrNoEvents) {
		t.Errorf("empty log: %v", err)
	}
	inc, err := os.ReadFile(filepath.Join("testdata", "incomplete.jsonl"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, outdir.EventsFile), inc, 0o644))
	if _, err := WriteOut(t.Context(), dir, MarkdownOptions{}); err != nil {
		t.Errorf("incomplete log: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, outdir.ResultFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("result.json written without run.finished: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := WriteOut(ctx, dir, MarkdownOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	recs := readRecords(t, "success.jsonl")
	if err := WriteResult(t.Context(), dir, recs[0]); !errors.Is(err, ErrNoRunFinished) {
		t.Errorf("WriteResult(run.started) = %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A log cut while a tool ran counts that call as failed (the runner would
// have ended it as "tool execution aborted") and calls the last text the
// last message, not the final one.
func TestBuildKilledMidTool(t *testing.T) {
	var buf bytes.Buffer
	w := event.NewWriter(&buf, "run-1")
	for _, p := range []event.Payload{
		event.RunStarted{Task: "t", Model: "m"},
		event.StepStarted{Step: 1},
		event.Text{Step: 1, Text: "Running the tests."},
		event.ToolStarted{Step: 1, CallID: "c1", Tool: "read", Input: json.RawMessage(`{"path":"a"}`)},
		event.ToolCompleted{Step: 1, CallID: "c1", Tool: "read", Output: "x"},
		event.ToolStarted{Step: 1, CallID: "c2", Tool: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)},
	} {
		if err := w.Emit(p); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := event.ReadLog(&buf)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolUse{{Name: "bash", Calls: 1, Failed: 1}, {Name: "read", Calls: 1}}
	if diff := cmp.Diff(want, r.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	md := r.Markdown(MarkdownOptions{})
	if !strings.Contains(md, "Last message (the run did not finish)") || strings.Contains(md, "Final message") {
		t.Errorf("an incomplete log's last text must not be called final:\n%s", md)
	}
}
