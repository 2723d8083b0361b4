package github

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMarker(t *testing.T) {
	if got := Marker("fix-tests"); got != "<!-- runner:task=fix-tests -->" {
		t.Errorf("got %q", got)
	}
	if got := Marker("a-->b\nc"); strings.Contains(got[:len(got)-3], "-->") || strings.Contains(got, "\n") {
		t.Errorf("marker not sanitised: %q", got)
	}
	if !HasMarker("x "+Marker("t")) || HasMarker("<!-- other -->") {
		t.Error("HasMarker")
	}
}

func TestFitComment(t *testing.T) {
	summary := Marker("t") + "\n## ✅ success\n\nFixed the bug. Cost $0.02.\n\n"
	details := "<details><summary>Patch</summary>\n\n```diff\n" + strings.Repeat("+ ünïcödé line\n", 20000) + "```\n</details>\n"
	tests := []struct {
		name, body string
		limit      int
		keep       string // prefix that must survive
	}{
		{"fits", summary + "<details>x</details>", CommentLimit, summary + "<details>x</details>"},
		{"details cut first", summary + details, CommentLimit, summary + "<details><summary>Patch</summary>\n\n```diff\n+ ünïcödé line\n"},
		{"summary too long", Marker("t") + "\n" + strings.Repeat("word ", 20000) + details, 1000, Marker("t") + "\nword word"},
		{"no details", Marker("t") + "\n" + strings.Repeat("é\n", 100000), CommentLimit, Marker("t") + "\né\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FitComment(tt.body, tt.limit)
			if n := utf8.RuneCountInString(got); n > tt.limit {
				t.Errorf("%d runes, limit %d", n, tt.limit)
			}
			if !strings.HasPrefix(got, tt.keep) {
				t.Errorf("prefix lost: %q", got[:min(len(got), 120)])
			}
			if got == tt.body {
				return
			}
			if !strings.HasSuffix(got, commentCutNotice) {
				t.Errorf("no cut notice")
			}
			if openFence(got) || strings.Count(got, "<details") != strings.Count(got, "</details>") {
				t.Errorf("blocks left open: %q", got[len(got)-200:])
			}
			if tt.limit == CommentLimit && utf8.RuneCountInString(got) < CommentLimit-300 {
				t.Errorf("cut too much: %d runes", utf8.RuneCountInString(got))
			}
		})
	}
}

func FuzzFitComment(f *testing.F) {
	f.Add("<!-- runner:task=t -->\nsummary\n<details>\n```\ncode\n", 40)
	f.Add("ééééé\n<details><details>", 7)
	f.Fuzz(func(t *testing.T, body string, limit int) {
		if limit < 200 || limit > 5000 || !utf8.ValidString(body) {
			return
		}
		got := FitComment(body, limit)
		if utf8.RuneCountInString(got) > limit {
			t.Fatalf("%d runes > %d", utf8.RuneCountInString(got), limit)
		}
		if !utf8.ValidString(got) {
			t.Fatal("invalid UTF-8")
		}
	})
}

func TestFitCommentManyOpenBlocks(t *testing.T) {
	body := Marker("t") + "\n" + strings.Repeat("<details>\n", 20000)
	got := FitComment(body, CommentLimit)
	if n := utf8.RuneCountInString(got); n > CommentLimit || !strings.HasPrefix(got, Marker("t")) {
		t.Errorf("%d runes", n)
	}
	if strings.Count(got, "<details>") != strings.Count(got, "</details>") {
		t.Error("unbalanced")
	}
}

func BenchmarkFitComment(b *testing.B) {
	body := Marker("t") + "\n## summary\n\n<details><summary>Patch</summary>\n\n```diff\n" + strings.Repeat("+ some added line of code\n", 200000) + "```\n</details>\n"
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		FitComment(body, CommentLimit)
	}
}
