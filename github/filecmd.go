package github

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// SummaryLimit is the largest step summary GitHub accepts (1 MiB); above
// it the runner drops the whole summary.
const SummaryLimit = 1 << 20

// summaryCutNotice ends a step summary cut to fit SummaryLimit.
const summaryCutNotice = "\n\n> [!WARNING]\n> The summary was cut to fit GitHub's 1 MiB limit; the full report is in the events file.\n"

// Output is one name/value pair for GITHUB_OUTPUT.
type Output struct {
	Name, Value string
}

// WriteOutputs appends name/value pairs to the GITHUB_OUTPUT file at path in
// the heredoc form the Actions toolkit uses:
//
//	name<<ghadelimiter_<random>
//	value
//	ghadelimiter_<random>
//
// The delimiter is random per pair and never occurs in the name or value.
// An empty path is an error (outside Actions, callers skip the call).
func WriteOutputs(path string, outs ...Output) error {
	if path == "" {
		return fmt.Errorf("%w: GITHUB_OUTPUT is not set", ErrFileCommand)
	}
	var b strings.Builder
	for _, o := range outs {
		if err := formatOutput(&b, o); err != nil {
			return err
		}
	}
	return appendFile(path, b.String())
}

func formatOutput(b *strings.Builder, o Output) error {
	if o.Name == "" || strings.ContainsAny(o.Name, "\r\n=<") {
		return fmt.Errorf("%w: output name %q", ErrFileCommand, o.Name)
	}
	delim, err := delimiterFor(o.Name + "\n" + o.Value)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "%s<<%s\n%s\n%s\n", o.Name, delim, o.Value, delim)
	return nil
}

// delimiterFor returns a random delimiter that does not occur in s.
func delimiterFor(s string) (string, error) {
	for range 8 {
		var buf [16]byte
		if _, err := rand.Read(buf[:]); err != nil {
			return "", fmt.Errorf("%w: delimiter: %w", ErrFileCommand, err)
		}
		d := "ghadelimiter_" + hex.EncodeToString(buf[:])
		if !strings.Contains(s, d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: value contains every generated delimiter", ErrFileCommand)
}

// AppendSummary appends Markdown to the GITHUB_STEP_SUMMARY file at path.
// The file as a whole stays within SummaryLimit bytes: when the new text
// does not fit in what is left, its start is kept (cut on a line boundary,
// an open code fence closed) and a notice says it was cut.
func AppendSummary(path, markdown string) error {
	if path == "" {
		return fmt.Errorf("%w: GITHUB_STEP_SUMMARY is not set", ErrFileCommand)
	}
	var used int64
	if fi, err := os.Stat(path); err == nil {
		used = fi.Size()
	} else if !os.IsNotExist(err) {
		return fmt.Errorf("github: step summary: %w", err)
	}
	room := SummaryLimit - int(used)
	if room <= len(summaryCutNotice) {
		return nil // full already: writing more would drop the whole summary
	}
	return appendFile(path, FitBytes(markdown, room, summaryCutNotice))
}

// FitBytes returns s when it has at most limit bytes, otherwise its start cut
// on a line (else rune) boundary, with an open ``` fence closed and notice
// appended, in at most limit bytes in all.
func FitBytes(s string, limit int, notice string) string {
	if len(s) <= limit {
		return s
	}
	const fenceClose = "\n```"
	keep := limit - len(notice)
	if keep <= len(fenceClose) {
		return cutAtLine(notice, limit)
	}
	head := cutAtLine(s, keep)
	if openFence(head) {
		head = cutAtLine(s, keep-len(fenceClose))
		if openFence(head) {
			head += fenceClose
		}
	}
	return head + notice
}

// cutAtLine returns the longest prefix of s of at most n bytes that ends at
// a line break, or at a rune boundary when that would drop more than half.
func cutAtLine(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	head := s[:n]
	if i := strings.LastIndexByte(head, '\n'); i > 0 && i >= len(head)/2 {
		return head[:i]
	}
	return head
}

// openFence reports whether s ends inside a ``` code fence.
func openFence(s string) bool {
	open := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			open = !open
		}
	}
	return open
}

func appendFile(path, s string) (err error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("github: open %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("github: close %s: %w", path, cerr)
		}
	}()
	if _, err := f.WriteString(s); err != nil {
		return fmt.Errorf("github: write %s: %w", path, err)
	}
	return nil
}
