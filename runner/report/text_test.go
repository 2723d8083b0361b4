package report

import "testing"

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
