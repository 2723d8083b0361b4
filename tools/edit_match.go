package tools

import (
	"regexp"
	"strings"
)

// span is a byte range of the file content.
type span struct{ start, end int }

// matchResult is where old_string was found and with which replacement.
type matchResult struct {
	spans    []span
	newText  string
	strategy string // "exact", "line endings", "trimmed lines", "whitespace"
}

// findMatches looks for old in content, strictest strategy first, and
// stops at the first strategy that finds anything. Whitespace-tolerant
// strategies follow the idea of OpenCode's edit replacers.
func findMatches(content, old, newText string) matchResult {
	if s := exactSpans(content, old); len(s) > 0 {
		return matchResult{spans: s, newText: newText, strategy: "exact"}
	}
	if strings.Contains(content, "\r\n") && !strings.Contains(old, "\r\n") {
		crlfOld := strings.ReplaceAll(old, "\n", "\r\n")
		if s := exactSpans(content, crlfOld); len(s) > 0 {
			return matchResult{spans: s, newText: strings.ReplaceAll(newText, "\n", "\r\n"), strategy: "line endings"}
		}
	}
	if s := trimmedLineSpans(content, old); len(s) > 0 {
		return matchResult{spans: s, newText: newText, strategy: "trimmed lines"}
	}
	if s := whitespaceSpans(content, old); len(s) > 0 {
		return matchResult{spans: s, newText: newText, strategy: "whitespace"}
	}
	return matchResult{}
}

func exactSpans(content, old string) []span {
	var out []span
	for from := 0; ; {
		i := strings.Index(content[from:], old)
		if i < 0 {
			return out
		}
		out = append(out, span{from + i, from + i + len(old)})
		from += i + len(old)
	}
}

// line is one line of content without its terminator.
type line struct {
	text       string
	start, end int
}

func splitLines(content string) []line {
	var out []line
	start := 0
	for start <= len(content) {
		i := strings.IndexByte(content[start:], '\n')
		if i < 0 {
			if start < len(content) {
				out = append(out, line{strings.TrimSuffix(content[start:], "\r"), start, len(content)})
			}
			return out
		}
		end := start + i
		out = append(out, line{strings.TrimSuffix(content[start:end], "\r"), start, end})
		start = end + 1
	}
	return out
}

// trimmedLineSpans matches whole lines whose trimmed text equals the
// trimmed lines of old (indentation and trailing spaces ignored).
func trimmedLineSpans(content, old string) []span {
	want := strings.Split(strings.Trim(old, "\r\n"), "\n")
	for i := range want {
		want[i] = strings.TrimSpace(want[i])
	}
	if len(want) == 0 || (len(want) == 1 && want[0] == "") {
		return nil
	}
	lines := splitLines(content)
	var out []span
	for i := 0; i+len(want) <= len(lines); i++ {
		ok := true
		for k, w := range want {
			if strings.TrimSpace(lines[i+k].text) != w {
				ok = false
				break
			}
		}
		if ok {
			last := lines[i+len(want)-1]
			end := last.start + len(strings.TrimSuffix(content[last.start:last.end], "\r"))
			out = append(out, span{lines[i].start, end})
			i += len(want) - 1
		}
	}
	return out
}

// whitespaceSpans matches old with every run of whitespace standing for
// any run of whitespace.
func whitespaceSpans(content, old string) []span {
	fields := strings.Fields(old)
	if len(fields) == 0 {
		return nil
	}
	for i, f := range fields {
		fields[i] = regexp.QuoteMeta(f)
	}
	re, err := regexp.Compile(strings.Join(fields, `\s+`))
	if err != nil {
		return nil
	}
	var out []span
	for _, m := range re.FindAllStringIndex(content, -1) {
		out = append(out, span{m[0], m[1]})
	}
	return out
}

// replaceSpans replaces each span (ascending, disjoint) with repl.
func replaceSpans(content string, spans []span, repl string) string {
	var b strings.Builder
	prev := 0
	for _, s := range spans {
		b.WriteString(content[prev:s.start])
		b.WriteString(repl)
		prev = s.end
	}
	b.WriteString(content[prev:])
	return b.String()
}

// lineOf is the 1-based line number of byte offset off.
func lineOf(content string, off int) int { return strings.Count(content[:off], "\n") + 1 }
