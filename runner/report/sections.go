package report

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

// maxFileRows is the most files listed in the Changes table.
const maxFileRows = 50

func (r Report) finalSection(h string) section {
	msg := strings.TrimSpace(noMentions(r.FinalMessage))
	if msg == "" {
		return section{name: "Final message"}
	}
	head := h + " Final message\n\n"
	if r.Status == StatusIncomplete {
		head = h + " Last message (the run did not finish)\n\n"
	}
	s := section{name: "Final message", text: head + balanceFences(msg) + "\n\n"}
	s.cut = func(n int) (string, bool) {
		const tail = "\n\n_… message shortened._\n\n"
		room := n - len(head) - len(tail) - 8 // 8: a closing fence
		if room < 40 {
			return "", false
		}
		return head + balanceFences(cutLines(msg, room)) + tail, true
	}
	return s
}

func (r Report) changesSection(h string) string {
	if r.Diff == nil {
		return ""
	}
	files := r.Diff.Files
	n := min(len(files), maxFileRows+1) // the extra row says how many were left out
	return table(h, "Changes", "| File | Status | + | − |\n|---|---|--:|--:|", n, func(i int) string {
		if i == maxFileRows {
			return fmt.Sprintf("| … %d more files | | | |", len(files)-maxFileRows)
		}
		f := files[i]
		name := code(f.Path)
		if f.OldPath != "" && f.OldPath != f.Path {
			name = code(f.OldPath) + " → " + code(f.Path)
		}
		add, del := fmt.Sprint(f.Additions), fmt.Sprint(f.Deletions)
		if f.Binary {
			add, del = "binary", ""
		}
		if o := f.Omitted; o != nil {
			add = fmt.Sprintf("binary, **not in the patch** (%s → %s: %s)", byteText(o.OldSize), byteText(o.NewSize), cell(o.Reason))
		}
		return fmt.Sprintf("| %s | %s | %s | %s |", name, cell(string(f.Status)), add, del)
	})
}

// checksSection is the table of check attempts, then the hint of the
// last failed check that has one (the same for every check of a run).
func (r Report) checksSection(h string) string {
	hint := ""
	for _, c := range r.Checks {
		if !c.Passed && c.Hint != "" {
			hint = "Hint: " + strings.NewReplacer("*", `\*`, "_", `\_`).Replace(cell(c.Hint)) + ".\n\n"
		}
	}
	return table(h, "Checks", "| Check | Attempt | Result | Exit | Duration |\n|---|--:|---|--:|--:|", len(r.Checks), func(i int) string {
		c := r.Checks[i]
		res := "✅ passed"
		switch {
		case c.Cancelled:
			res = "⊘ cancelled"
		case !c.Passed:
			res = "❌ failed"
		}
		return fmt.Sprintf("| %s | %d | %s | %d | %s |", cell(c.Name), c.Attempt, res, c.ExitCode, event.FormatMS(c.DurationMS))
	}) + hint + r.failedOutputs()
}

// Bounds of a failed check's output shown in the report: its last lines.
const (
	checkTailLines = 30
	checkTailBytes = 4 << 10
)

// failedOutputs shows the tail of each check's output whose last attempt
// failed, at most checkTailLines lines and checkTailBytes bytes each.
func (r Report) failedOutputs() string {
	last := map[string]int{} // check name → index of its last attempt
	for i, c := range r.Checks {
		last[c.Name] = i
	}
	var b strings.Builder
	for i, c := range r.Checks {
		if last[c.Name] != i || c.Passed || c.Cancelled || strings.TrimSpace(c.Output) == "" {
			continue
		}
		tail, cut := checkTail(c.Output)
		what := "Output"
		if cut {
			what = fmt.Sprintf("The last %d lines of the output", strings.Count(tail, "\n")+1)
		}
		fence := fenceFor(tail)
		fmt.Fprintf(&b, "%s of %s (exit %d):\n\n%s\n%s\n%s\n\n", what, code(c.Name), c.ExitCode, fence, tail, fence)
	}
	return b.String()
}

// checkTail is the end of a check's output within the bounds; cut says
// whether anything was left out.
func checkTail(out string) (string, bool) {
	out = strings.TrimRight(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
	tail, cut := out, false
	if len(tail) > checkTailBytes {
		tail, cut = tail[len(tail)-checkTailBytes:], true
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
		}
	}
	if lines := strings.Split(tail, "\n"); len(lines) > checkTailLines || (cut && len(lines) > 1) {
		start := len(lines) - checkTailLines
		if cut { // the first line is a piece of one
			start = max(start, 1)
		}
		tail, cut = strings.Join(lines[max(start, 0):], "\n"), true
	}
	return tail, cut
}

func (r Report) denialsSection(h string) string {
	return table(h, "Denials", "| Step | Tool | Permission | Pattern | Rule | Reason |\n|--:|---|---|---|---|---|", len(r.Denials), func(i int) string {
		d := r.Denials[i]
		rule := d.DecidedBy()
		if d.Rule != nil {
			rule = code(*d.Rule)
		}
		return fmt.Sprintf("| %d | %s | %s | %s | %s | %s |", d.Step, cell(d.Tool), cell(d.Permission),
			code(shorten(d.Pattern, 200)), rule, noMentions(cell(shorten(d.Reason, 300))))
	})
}

func (r Report) toolsSection(h string) string {
	return table(h, "Tools", "| Tool | Calls | Failed | Denied |\n|---|--:|--:|--:|", len(r.Tools), func(i int) string {
		t := r.Tools[i]
		return fmt.Sprintf("| %s | %d | %d | %d |", code(t.Name), t.Calls, t.Failed, t.Denied)
	})
}

// table renders a Markdown section holding one table: the heading h+" "+title,
// head (the column names and the alignment row, without a final newline),
// then row(i) for i in [0, n), and a blank line. It is "" when n is 0, so an
// empty table leaves no heading behind.
func table(h, title, head string, n int, row func(i int) string) string {
	if n == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n\n%s\n", h, title, head)
	for i := range n {
		b.WriteString(row(i))
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String()
}

func (r Report) structuredSection() section {
	if len(r.StructuredOutput) == 0 {
		return section{name: "Structured output"}
	}
	// Shown open, not collapsed: it is the run's answer.
	body := indentJSON(r.StructuredOutput)
	fence := fenceFor(body)
	return section{name: "Structured output", text: fmt.Sprintf("**Structured output**\n\n%sjson\n%s\n%s\n\n", fence, body, fence)}
}

func patchSection(patch string, size int64, d *Diff) section {
	if strings.TrimSpace(patch) == "" {
		return section{name: "Patch"}
	}
	summary := "Patch"
	if d != nil {
		summary += " (" + diffText(len(d.Files), d.Additions, d.Deletions) + ")"
	}
	if size > int64(len(patch)) {
		summary += fmt.Sprintf(" — first %s of %s", byteText(int64(len(patch))), byteText(size))
		patch = strings.TrimRight(patch, "\n") + fmt.Sprintf("\n… the whole patch (%d bytes) is in the run's %s\n", size, outdir.PatchFile)
	}
	s := section{name: "Patch", text: details(summary, "diff", patch)}
	s.cut = func(n int) (string, bool) {
		// the frame, a fence as long as the whole patch needs, the note
		overhead := len(details(summary+" — shortened", "diff", "")) + 2*len(fenceFor(patch)) + 40
		room := n - overhead
		if room < 80 {
			return "", false
		}
		body := cutLines(patch, room)
		more := strings.Count(patch[len(body):], "\n")
		body = strings.TrimRight(body, "\n") + fmt.Sprintf("\n… %d more lines\n", more)
		return details(summary+" — shortened", "diff", body), true
	}
	return s
}

// details is a collapsed block holding body in a fenced code block.
func details(summary, lang, body string) string {
	fence := fenceFor(body)
	return fmt.Sprintf("<details><summary>%s</summary>\n\n%s%s\n%s\n%s\n\n</details>\n\n",
		cell(summary), fence, lang, strings.TrimRight(body, "\n"), fence)
}
