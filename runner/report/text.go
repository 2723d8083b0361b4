package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/seed43ef5acb/runner/runner/event"
)

// cell makes s safe in a table cell: one line, pipes escaped.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.TrimSpace(s)
}

// code is s as an inline code span, safe in a table cell.
func code(s string) string {
	s = strings.ReplaceAll(cell(s), `\|`, "|")
	ticks := strings.Repeat("`", maxRun(s, '`')+1)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	// GitHub ends a table cell at "|" even inside code spans.
	return ticks + pad + strings.ReplaceAll(s, "|", `\|`) + pad + ticks
}

// maxRun is the longest run of c in s.
func maxRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// fenceFor is a backtick fence longer than any backtick run in body.
func fenceFor(body string) string {
	return strings.Repeat("`", max(3, maxRun(body, '`')+1))
}

// fenceLine matches a line opening or closing a fenced code block.
func fenceLine() *regexp.Regexp { return regexp.MustCompile("(?m)^ {0,3}(```+|~~~+)") }

// balanceFences closes a fenced code block left open in s, so the sections
// after it render as Markdown.
func balanceFences(s string) string {
	var open string
	for _, m := range fenceLine().FindAllStringSubmatch(s, -1) {
		f := m[1]
		switch {
		case open == "":
			open = f
		case f[0] == open[0] && len(f) >= len(open):
			open = ""
		}
	}
	if open == "" {
		return s
	}
	return strings.TrimRight(s, "\n") + "\n" + open
}

// mention matches an @mention (a user or team), not an e-mail address.
func mention() *regexp.Regexp {
	return regexp.MustCompile(`(^|[^\w.@/])@([A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9_.-]+)?)`)
}

// NoMentions defuses @mentions in model-written text (a zero-width space
// after "@"), so a comment or a review cannot ping people; e-mail
// addresses and paths are left alone.
func NoMentions(s string) string { return noMentions(s) }

// noMentions is NoMentions.
func noMentions(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return mention().ReplaceAllString(s, "$1@\u200b$2")
}

// cutBytes cuts s to at most n bytes at a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// cutLines cuts s to at most n bytes at a line end (or a rune boundary
// when the first line alone is longer).
func cutLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	c := cutBytes(s, n)
	if i := strings.LastIndexByte(c, '\n'); i > 0 {
		return c[:i+1]
	}
	return c
}

// shorten cuts s to n bytes with "…".
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutBytes(s, n) + "…"
}

func indentJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// thousands formats n with comma separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func tokensText(t event.Tokens) string {
	in := thousands(t.Input) + " in"
	if t.CacheRead > 0 {
		in += " (" + thousands(t.CacheRead) + " cached)"
	}
	out := thousands(t.Output) + " out"
	if t.Reasoning > 0 {
		out += " (" + thousands(t.Reasoning) + " reasoning)"
	}
	return in + " · " + out
}

func diffText(files, add, del int) string {
	unit := "files"
	if files == 1 {
		unit = "file"
	}
	return fmt.Sprintf("%d %s, +%d −%d", files, unit, add, del)
}
