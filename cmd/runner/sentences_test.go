package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/doclink"
)

// longSentenceWords is where a sentence counts as long (STYLE.md).
const longSentenceWords = 40

var (
	mdCode      = regexp.MustCompile("`[^`]*`")
	mdLinkText  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	sentenceEnd = regexp.MustCompile(`[.!?]["')]*\s+`)
)

// prose returns a page's prose blocks (paragraphs and list items), each
// joined into one line with the line number it starts on. Fences, tables,
// headings and HTML comments are left out; inline code counts as one word.
func prose(doc string) (blocks []string, starts []int) {
	var cur []string
	start := 0
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, " "))
			starts = append(starts, start)
		}
		cur = nil
	}
	for i, line := range strings.Split(doclink.StripFences(doc), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "|") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "<!--"):
			flush()
			continue
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || regexp.MustCompile(`^\d+\. `).MatchString(t):
			flush()
			t = strings.TrimLeft(t, "-* 0123456789.")
		}
		if len(cur) == 0 {
			start = i + 1
		}
		cur = append(cur, t)
	}
	flush()
	return blocks, starts
}

// sentences splits a prose block into sentences with their word counts.
func sentences(block string) []string {
	block = mdLinkText.ReplaceAllString(block, "$1")
	block = mdCode.ReplaceAllString(block, "CODE")
	block = strings.NewReplacer("e.g. ", "eg ", "i.e. ", "ie ", "vs. ", "vs ").Replace(block)
	var out []string
	for _, s := range sentenceEnd.Split(block, -1) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// sentenceStats counts a page's sentences and those over the limit.
func sentenceStats(t *testing.T, page string) (total int, long []string) {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	blocks, starts := prose(string(data))
	for i, b := range blocks {
		for _, s := range sentences(b) {
			total++
			if n := len(strings.Fields(s)); n > longSentenceWords {
				long = append(long, fmt.Sprintf("%s:%d: %d words: %.80s…", page, starts[i], n, s))
			}
		}
	}
	return total, long
}

// longSentencePages are the pages not yet rewritten to sentences of at
// most 40 words; every other page is held to it by TestDocSentenceLength.
var longSentencePages = []string{
	"../../ARCHITECTURE.md", "../../docs/observability.md",
	"../../docs/providers.md",
}

// TestDocSentenceLength reports, per page, the share of sentences over 40
// words (-v lists them), and fails on a long one outside longSentencePages.
func TestDocSentenceLength(t *testing.T) {
	all, allLong := 0, 0
	for _, page := range docPages(t) {
		total, long := sentenceStats(t, page)
		all += total
		allLong += len(long)
		if !slices.Contains(longSentencePages, page) {
			for _, l := range long {
				t.Errorf("%s: split it into sentences of at most %d words (STYLE.md)", l, longSentenceWords)
			}
		}
		t.Logf("%-30s %4d sentences, %3d over %d words (%.1f%%)", page, total, len(long), longSentenceWords, pct(len(long), total))
		if testing.Verbose() {
			for _, l := range long {
				t.Log("  " + l)
			}
		}
	}
	t.Logf("all pages: %d sentences, %d over %d words (%.1f%%)", all, allLong, longSentenceWords, pct(allLong, all))
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}
