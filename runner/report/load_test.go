package report

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadAndRender(t *testing.T) {
	ok, failed := filepath.Join("testdata", "success.jsonl"), filepath.Join("testdata", "failed.jsonl")
	reps, err := Load(t.Context(), ok, failed)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 {
		t.Fatalf("%d reports", len(reps))
	}
	md, err := Render(reps, FormatMarkdown, MarkdownOptions{})
	if err != nil || strings.Count(string(md), "\n---\n") != 1 || !strings.Contains(string(md), "fix-tests — failed") {
		t.Errorf("markdown: %v\n%s", err, md)
	}
	js, err := Render(reps, FormatJSON, MarkdownOptions{})
	var arr []Report
	if err != nil || json.Unmarshal(js, &arr) != nil || len(arr) != 2 {
		t.Errorf("json array: %v\n%s", err, js)
	}
	one, err := Render(reps[:1], FormatJSON, MarkdownOptions{})
	var obj Report
	if err != nil || json.Unmarshal(one, &obj) != nil || obj.RunID != "run-success" {
		t.Errorf("json object: %v\n%s", err, one)
	}
	if _, err := Render(reps, "html", MarkdownOptions{}); !errors.Is(err, ErrFormat) {
		t.Errorf("html: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	must(t, os.WriteFile(empty, nil, 0o644))
	if _, err := Load(t.Context(), empty); !errors.Is(err, ErrNoEvents) {
		t.Errorf("empty: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	must(t, os.WriteFile(bad, []byte("{oops\n{}\n"), 0o644))
	if _, err := Load(t.Context(), bad); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("malformed: %v", err)
	}
}

func TestMarkdownFile(t *testing.T) {
	md, err := MarkdownFile(t.Context(), filepath.Join("testdata", "success.jsonl"), MarkdownOptions{MaxLen: 1000})
	if err != nil || len(md) > 1000 || !strings.HasPrefix(md, "### ✅ runner: fix-tests") {
		t.Errorf("MarkdownFile = %v\n%s", err, md)
	}
	if _, err := MarkdownFile(t.Context(), filepath.Join(t.TempDir(), "none.jsonl"), MarkdownOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestLoadCutLog: a log with no whole event whose last line is cut before
// its newline is ErrNoEvents that names the cut line; a cut tail after
// whole events is still dropped silently.
func TestLoadCutLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.jsonl")
	must(t, os.WriteFile(cut, []byte("\n"+`{"v":1,"seq":1,"time":"2026-12-0`), 0o644))
	_, err := Load(t.Context(), cut)
	if !errors.Is(err, ErrNoEvents) || !strings.Contains(err.Error(), "cut.jsonl: line 2 is incomplete") || strings.Contains(err.Error(), "empty") {
		t.Errorf("cut: %v", err)
	}
	whole, err := os.ReadFile(filepath.Join("testdata", "success.jsonl"))
	must(t, err)
	tail := filepath.Join(dir, "tail.jsonl")
	must(t, os.WriteFile(tail, append(whole, `{"v":1,"seq":99,"ti`...), 0o644))
	if reps, err := Load(t.Context(), tail); err != nil || len(reps) != 1 {
		t.Errorf("cut tail after whole events: %v, %d reports", err, len(reps))
	}
}
