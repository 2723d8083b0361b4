package event

import (
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/internal/workflowcmd"
)

// text writes up to TextLines lines of a model text part.
func (c *Console) text(b *strings.Builder, text string) {
	if c.o.TextLines < 0 {
		return
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	shown := lines
	if len(shown) > c.o.TextLines {
		shown = shown[:c.o.TextLines]
	}
	for _, l := range shown {
		c.untrusted(b, "  "+c.paint(dim, "│")+" "+sanitize(l, 200))
	}
	if more := len(lines) - len(shown); more > 0 {
		c.trusted(b, "  "+c.paint(dim, fmt.Sprintf("│ … %d more lines", more)))
	}
}

func (c *Console) toolStarted(b *strings.Builder, v ToolStarted) {
	c.calls[v.CallID] = v
	if !c.o.TTY {
		return
	}
	c.endPending(b)
	c.stopCommands(b)
	b.WriteString("  " + c.paint(dim, "…") + " " + c.toolLabel(v))
	c.pending = v.CallID
}

// toolLine writes the finished line of call id, rewriting its pending line.
func (c *Console) toolLine(b *strings.Builder, id, line string) {
	if c.pending == id {
		b.WriteString("\r\x1b[K")
		c.pending = ""
	} else {
		c.endPending(b)
	}
	c.stopCommands(b)
	b.WriteString(line + "\n")
	delete(c.calls, id)
}

// toolLabel is "name  input summary".
func (c *Console) toolLabel(v ToolStarted) string {
	return c.paint(bold, sanitize(v.Tool, 40)) + "  " + inputSummary(v)
}

func (c *Console) startedOf(id, tool string) ToolStarted {
	if s, ok := c.calls[id]; ok {
		return s
	}
	return ToolStarted{CallID: id, Tool: tool, Input: []byte("null")}
}

func (c *Console) toolCompleted(b *strings.Builder, v ToolCompleted) {
	line := "  " + c.paint(green, "✓") + " " + c.toolLabel(c.startedOf(v.CallID, v.Tool))
	if code, ok := v.Metadata["exit_code"]; ok && fmt.Sprint(code) != "0" {
		line += "  " + c.paint(yellow, fmt.Sprintf("exit %v", code))
	}
	if v.Truncated {
		line += c.paint(dim, "  (output truncated)")
	}
	c.toolLine(b, v.CallID, line+"  "+c.paint(dim, FormatMS(v.DurationMS)))
}

func (c *Console) toolFailed(b *strings.Builder, v ToolFailed) {
	what := "error: " + oneLine(v.Error, 120)
	if v.Denied {
		what = "denied"
	}
	line := "  " + c.paint(red, "✗") + " " + c.toolLabel(c.startedOf(v.CallID, v.Tool)) + "  " +
		c.paint(red, what) + "  " + c.paint(dim, FormatMS(v.DurationMS))
	c.toolLine(b, v.CallID, line)
}

func (c *Console) denied(b *strings.Builder, v PermissionDenied) {
	if c.o.GitHubActions {
		c.annotate(b, workflowcmd.Annotation{Level: workflowcmd.Warning, Title: "runner: permission denied", Message: denialText(v)})
		return
	}
	c.untrusted(b, "  "+c.paint(red, "⊘ denied")+" "+denialText(v))
}

// stepFinished writes the step's line; why, when not "", replaces the
// finish reason (a step cut short by the timeout).
func (c *Console) stepFinished(b *strings.Builder, v StepFinished, why string) {
	c.tokens = c.tokens.Add(v.Tokens)
	parts := []string{firstOf(why, v.FinishReason), tokenSummary(v.Tokens)}
	if v.CostUSD != nil {
		c.cost += *v.CostUSD
		c.costed = true
		parts = append(parts, FormatCost(*v.CostUSD))
	}
	total := "total " + formatCount(c.tokens.Input+c.tokens.Output) + " tokens"
	if c.costed {
		total += " " + FormatCost(c.cost)
	}
	parts = append(parts, total, FormatMS(v.DurationMS))
	c.trusted(b, "  "+c.paint(dim, fmt.Sprintf("step %d: %s", v.Step, strings.Join(parts, " · "))))
}

func (c *Console) checkFinished(b *strings.Builder, v CheckFinished) {
	if v.Passed {
		c.trusted(b, fmt.Sprintf("  %s %s passed  %s", c.paint(green, "✓"), sanitize(v.Name, 80), c.paint(dim, FormatMS(v.DurationMS))))
		return
	}
	if v.Cancelled {
		c.trusted(b, fmt.Sprintf("  %s %s cancelled  %s", c.paint(yellow, "⊘"), sanitize(v.Name, 80), c.paint(dim, FormatMS(v.DurationMS))))
		return
	}
	c.trusted(b, fmt.Sprintf("  %s %s failed (exit %d)  %s", c.paint(red, "✗"), sanitize(v.Name, 80), v.ExitCode, c.paint(dim, FormatMS(v.DurationMS))))
	lines := strings.Split(strings.TrimRight(v.Output, "\n"), "\n")
	const tail = 20
	if len(lines) > tail {
		c.trusted(b, c.paint(dim, fmt.Sprintf("    … %d earlier lines", len(lines)-tail)))
		lines = lines[len(lines)-tail:]
	}
	for _, l := range lines {
		c.untrusted(b, "    "+sanitize(l, 200))
	}
	if v.Hint != "" {
		c.trusted(b, "    "+c.paint(dim, "hint: "+v.Hint))
	}
}

func (c *Console) runFinished(b *strings.Builder, v RunFinished) {
	c.endPending(b)
	c.endGroup(b)
	mark, col := "✓", green
	if v.Status != StatusSuccess {
		mark, col = "✗", red
	}
	parts := []string{plural(v.Steps, "step"), tokenSummary(v.Tokens)}
	if v.CostUSD != nil {
		parts = append(parts, FormatCost(*v.CostUSD))
	}
	if v.FilesChanged > 0 {
		parts = append(parts, plural(v.FilesChanged, "file")+" changed")
	}
	parts = append(parts, FormatMS(v.DurationMS))
	if c.o.GitHubActions {
		c.annotate(b, finalAnnotation(v, mark+" "+string(v.Status)+" · "+strings.Join(parts, " · ")))
		return
	}
	c.trusted(b, c.paint(col, mark+" "+string(v.Status))+" · "+strings.Join(parts, " · "))
	if v.Error != nil {
		c.untrusted(b, "  "+c.paint(red, SayOnce(sanitize(string(v.Error.Class), 40), oneLine(v.Error.Message, 300))))
		c.resumeCommands(b)
	}
}

// ignoredLine is the console's line under "Changes:" for files in paths
// git ignores that the run created or changed: not in the patch, left in
// the work tree (the first 5 named; paths are the commands' text).
func (c *Console) ignoredLine(w *IgnoredWritten) string {
	if w.Error != "" {
		return "  " + c.paint(yellow, "⚠ ignored paths not searched") + ": " + oneLine(w.Error, 300)
	}
	names := make([]string, 0, 6)
	for i, p := range w.Paths {
		if i == 5 {
			break
		}
		names = append(names, sanitize(p, 120))
	}
	if more := w.Total - len(names); more > 0 {
		names = append(names, fmt.Sprintf("and %d more", more))
	}
	unit := "paths"
	if w.Total == 1 {
		unit = "path"
	}
	where := "left in the work tree"
	if w.Isolated {
		where = "gone with the --isolate copy"
	}
	return "  " + c.paint(yellow, fmt.Sprintf("⚠ not in the patch: %d ignored %s written, %s", w.Total, unit, where)) +
		": " + strings.Join(names, ", ")
}
