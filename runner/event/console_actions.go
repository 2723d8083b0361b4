package event

import (
	"fmt"
	"io"
	"strings"

	"github.com/seed43ef5acb/runner/internal/workflowcmd"
)

// Annotate writes a workflow command annotation (under GitHub Actions; a
// no-op otherwise) between the console's own lines: outside any open
// ::stop-commands:: block, so that GitHub reads it. The pipeline uses it
// for what no event carries (a spec error, a delivery problem).
func (c *Console) Annotate(a workflowcmd.Annotation) error {
	if !c.o.GitHubActions {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	c.annotate(&b, a)
	if _, err := io.WriteString(c.w, b.String()); err != nil {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}

// annotate appends a to b, after closing a pending line and the
// ::stop-commands:: block.
func (c *Console) annotate(b *strings.Builder, a workflowcmd.Annotation) {
	c.endPending(b)
	c.resumeCommands(b)
	b.WriteString(a.String())
	b.WriteByte('\n')
}

// published writes a publish event: the URL of what was made, or why the
// call failed (a ::warning under Actions).
func (c *Console) published(b *strings.Builder, v Publish) {
	what := strings.ReplaceAll(string(v.Target), "_", " ")
	if v.OK {
		line := "  " + c.paint(green, "↗") + " " + what
		if v.URL != "" {
			line += " " + v.URL
		}
		c.untrusted(b, line)
		return
	}
	msg := what + " failed: " + oneLine(v.Error, 300)
	if v.URL != "" {
		msg += " (made: " + v.URL + ")"
	}
	if c.o.GitHubActions {
		c.annotate(b, workflowcmd.Annotation{Level: workflowcmd.Warning, Title: "runner: delivery", Message: msg})
		return
	}
	c.untrusted(b, "  "+c.paint(red, "✗")+" "+msg)
}

// annotationErrorRunes caps the run's error in the final annotation; a
// trailing "(see URL)" survives the cut (oneLine).
const annotationErrorRunes = 1000

// finalAnnotation is run.finished as one annotation under Actions: a
// ::notice with the result line for a success, an ::error with the result
// line and the error for anything else.
func finalAnnotation(v RunFinished, result string) workflowcmd.Annotation {
	if v.Status == StatusSuccess {
		return workflowcmd.Annotation{Level: workflowcmd.Notice, Title: "runner", Message: result}
	}
	msg := result
	if v.Error != nil {
		msg += " — " + oneLine(SayOnce(string(v.Error.Class), v.Error.Message), annotationErrorRunes)
	}
	return workflowcmd.Annotation{Level: workflowcmd.Error, Title: "runner: " + strings.ReplaceAll(string(v.Status), "_", " "), Message: msg}
}
