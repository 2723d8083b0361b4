package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/runner/event"
)

func TestTextHelpers(t *testing.T) {
	tests := []struct{ got, want string }{
		{cell("a|b\nc"), `a\|b c`},
		{code("x"), "`x`"},
		{code("a`b"), "``a`b``"},
		{code("`x"), "`` `x ``"},
		{code("a|b"), "`a\\|b`"},
		{balanceFences("```go\nx"), "```go\nx\n```"},
		{balanceFences("```\nx\n```\n"), "```\nx\n```\n"},
		{balanceFences("~~~\n```\n"), "~~~\n```\n~~~"},
		{noMentions("hi @octocat and @org/team, mail a@b.com"), "hi @\u200boctocat and @\u200borg/team, mail a@b.com"},
		{cutBytes("héllo", 2), "h"},
		{cutLines("ab\ncd\nef", 7), "ab\ncd\n"},
		{cutLines("abcdef", 3), "abc"},
		{thousands(1234567), "1,234,567"}, {thousands(-1000), "-1,000"}, {thousands(12), "12"},
		{fenceFor("````"), "`````"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

func FuzzMarkdownMaxLen(f *testing.F) {
	f.Add("Fixed it.\n```go\nx\n", "+a\n-b\n", 900)
	f.Fuzz(func(t *testing.T, final, patch string, maxLen int) {
		if maxLen < 0 || maxLen > 1<<16 {
			return
		}
		r := Report{Status: "success", FinalMessage: final, Diff: &Diff{Final: true}}
		md := r.Markdown(MarkdownOptions{Patch: patch, MaxLen: maxLen})
		minimal := r.Markdown(MarkdownOptions{MaxLen: 1})
		if maxLen > 0 && len(md) > max(maxLen, len(minimal)) {
			t.Fatalf("len %d > max(%d, %d)", len(md), maxLen, len(minimal))
		}
	})
}

func TestChangesSectionCapsRows(t *testing.T) {
	files := func(n int) []event.FileChange {
		fs := make([]event.FileChange, n)
		for i := range fs {
			fs[i] = event.FileChange{Path: fmt.Sprintf("f%d.go", i), Status: "modified", Additions: 1}
		}
		return fs
	}
	tests := []struct {
		name      string
		diff      *Diff
		rows      int
		more      string
		wantEmpty bool
	}{
		{name: "nil diff", diff: nil, wantEmpty: true},
		{name: "no files", diff: &Diff{}, wantEmpty: true},
		{name: "under the cap", diff: &Diff{Files: files(3)}, rows: 3},
		{name: "at the cap", diff: &Diff{Files: files(maxFileRows)}, rows: maxFileRows},
		{name: "over the cap", diff: &Diff{Files: files(maxFileRows + 2)}, rows: maxFileRows, more: "| … 2 more files | | | |\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Report{Diff: tt.diff}.changesSection("##")
			if tt.wantEmpty {
				if got != "" {
					t.Fatalf("want no section, got %q", got)
				}
				return
			}
			if !strings.HasPrefix(got, "## Changes\n\n| File | Status | + | − |\n|---|---|--:|--:|\n") || !strings.HasSuffix(got, "|\n\n") {
				t.Fatalf("frame wrong:\n%s", got)
			}
			if n := strings.Count(got, "| modified |"); n != tt.rows {
				t.Errorf("file rows = %d, want %d", n, tt.rows)
			}
			if strings.Contains(got, "more files") != (tt.more != "") || !strings.Contains(got, tt.more) {
				t.Errorf("more-files row: want %q in\n%s", tt.more, got)
			}
		})
	}
}
