package report

import (
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/runner/event"
)

// maxFileRows is the most files listed in the Changes table.
const maxFileRows = 50

func (r Report) finalSection(h string) section {
	msg := strings.TrimSpace(noMentions(r.FinalMessage))
	if msg == "" {
		return section{name: "Final message"}
	}
	head := h + " Final message\n\n"
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
	if r.Diff == nil || len(r.Diff.Files) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s Changes\n\n| File | Status | + | − |\n|---|---|--:|--:|\n", h)
	for i, f := range r.Diff.Files {
		if i == maxFileRows {
			fmt.Fprintf(&b, "| … %d more files | | | |\n", len(r.Diff.Files)-maxFileRows)
			break
		}
		name := code(f.Path)
		if f.OldPath != "" && f.OldPath != f.Path {
			name = code(f.OldPath) + " → " + code(f.Path)
		}
		add, del := fmt.Sprint(f.Additions), fmt.Sprint(f.Deletions)
		if f.Binary {
			add, del = "binary", ""
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, cell(f.Status), add, del)
	}
	b.WriteString("\n")
	return b.String()
}

func (r Report) checksSection(h string) string {
	if len(r.Checks) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s Checks\n\n| Check | Attempt | Result | Exit | Duration |\n|---|--:|---|--:|--:|\n", h)
	for _, c := range r.Checks {
		res := "✅ passed"
		if !c.Passed {
			res = "❌ failed"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %s |\n", cell(c.Name), c.Attempt, res, c.ExitCode, event.FormatMS(c.DurationMS))
	}
	b.WriteString("\n")
	return b.String()
}

func (r Report) denialsSection(h string) string {
	if len(r.Denials) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s Denials\n\n| Step | Tool | Permission | Pattern | Rule | Reason |\n|--:|---|---|---|---|---|\n", h)
	for _, d := range r.Denials {
		rule := "default deny"
		if d.Rule != nil {
			rule = code(*d.Rule)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", d.Step, cell(d.Tool), cell(d.Permission),
			code(shorten(d.Pattern, 200)), rule, noMentions(cell(shorten(d.Reason, 300))))
	}
	b.WriteString("\n")
	return b.String()
}

func (r Report) toolsSection(h string) string {
	if len(r.Tools) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s Tools\n\n| Tool | Calls | Failed | Denied |\n|---|--:|--:|--:|\n", h)
	for _, t := range r.Tools {
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", code(t.Name), t.Calls, t.Failed, t.Denied)
	}
	b.WriteString("\n")
	return b.String()
}

func (r Report) structuredSection() section {
	if len(r.StructuredOutput) == 0 {
		return section{name: "Structured output"}
	}
	body := indentJSON(r.StructuredOutput)
	return section{name: "Structured output", text: details("Structured output", "json", body)}
}

func patchSection(patch string, d *Diff) section {
	if strings.TrimSpace(patch) == "" {
		return section{name: "Patch"}
	}
	summary := "Patch"
	if d != nil {
		summary += " (" + diffText(len(d.Files), d.Additions, d.Deletions) + ")"
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
