package event

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ANSI styles.
const (
	bold   = "1"
	dim    = "2"
	red    = "31"
	green  = "32"
	yellow = "33"
)

// paint wraps s in an ANSI style when colour is on.
func (c *Console) paint(style, s string) string {
	if !c.o.Color || s == "" {
		return s
	}
	return "\x1b[" + style + "m" + s + "\x1b[0m"
}

// summaryKeys are the argument names whose value best summarises a call.
func summaryKeys() []string {
	return []string{"command", "pattern", "query", "url", "path", "file_path", "filePath", "name"}
}

// inputSummary is a one-line summary of a tool call's input.
func inputSummary(v ToolStarted) string {
	var obj map[string]json.RawMessage
	if len(v.Input) == 0 || json.Unmarshal(v.Input, &obj) != nil || obj == nil {
		if v.InputRaw != "" {
			return "invalid arguments " + quote(oneLine(v.InputRaw, 60))
		}
		return ""
	}
	for _, k := range summaryKeys() {
		var s string
		if raw, ok := obj[k]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
			return oneLine(s, 80)
		}
	}
	return oneLine(string(v.Input), 80)
}

// oneLine sanitises s, joins its lines with "⏎" and cuts it to max runes.
//
// A cut keeps a trailing "(see URL)" whole and shortens the text before it,
// so a long gate message still ends with its documentation link; the
// result is then at most max runes.
func oneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\n", " ⏎ ")
	clean := sanitize(s, math.MaxInt)
	if utf8.RuneCountInString(clean) <= max {
		return clean
	}
	if link := trailingLink(clean); link != "" {
		// room is what is left for the text after " …" and the link.
		room := max - utf8.RuneCountInString(link) - 2
		if room >= minTextBeforeLink {
			head := strings.TrimSpace(strings.TrimSuffix(clean, link))
			return sanitize(head, room) + " " + link
		}
	}
	return sanitize(clean, max)
}

// minTextBeforeLink is the least text worth keeping before a trailing
// link; with less room the cut drops the link instead.
const minTextBeforeLink = 40

// trailingLinkRE matches a "(see URL)" at the end of a message.
var trailingLinkRE = regexp.MustCompile(`\(see https?://[^\s()]+\)$`)

// trailingLink is s's trailing "(see URL)", or "" when s has none.
func trailingLink(s string) string {
	return trailingLinkRE.FindString(s)
}

// sanitize drops control characters (terminal escapes included; a tab
// becomes a space) and cuts s to max runes with "…".
func sanitize(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == utf8.RuneError {
			continue
		}
		if r == '\t' {
			r = ' '
		}
		if unicode.IsControl(r) || isBidiControl(r) {
			continue
		}
		if n == max {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// quote wraps s in double quotes unless empty.
func quote(s string) string {
	if s == "" {
		return `""`
	}
	return `"` + s + `"`
}

// FormatMS renders a duration given in milliseconds for people, with the
// unit chosen by size: whole milliseconds under a second ("999ms"), seconds
// with one decimal under a minute ("1.2s"), then minutes and seconds ("1m02s"),
// then hours and minutes ("1h02m"); the minute and hour forms truncate.
// The console and run reports share it so both show the same figure.
func FormatMS(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// formatCount formats a count: 950, 1.2k, 3.4M.
func formatCount(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

// FormatCost formats US dollars, the one way every output shows a cost:
// four decimals under a dollar ($0.0008), two from one ($1.25).
func FormatCost(usd float64) string {
	if usd < 1 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// tokenSummary is "1.2k in (1.0k cached) · 80 out".
func tokenSummary(t Tokens) string {
	in := formatCount(t.Input) + " in"
	if t.CacheRead > 0 {
		in += " (" + formatCount(t.CacheRead) + " cached)"
	}
	return in + " · " + formatCount(t.Output) + " out"
}

// diffstat is "3 files, +10 -2".
func diffstat(files, add, del int) string {
	return fmt.Sprintf("%s, +%d -%d", plural(files, "file"), add, del)
}

// isBidiControl reports the Unicode bidirectional overrides and isolates,
// which can make a terminal show text in another order than it is.
func isBidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// plural is "1 step", "2 steps".
func plural(n int, unit string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, unit)
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
