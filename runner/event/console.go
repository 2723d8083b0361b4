package event

import (
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
)

// ConsoleOptions configures the console view.
type ConsoleOptions struct {
	// TTY enables live updates: a running tool's line is rewritten in place
	// when it completes.
	TTY bool
	// Color enables ANSI colour (only set it for a terminal).
	Color bool
	// GitHubActions puts each step in a ::group:: block and every line that
	// carries model- or tool-produced text inside ::stop-commands::, so that
	// text cannot issue workflow commands.
	GitHubActions bool
	// Quiet shows only the final line.
	Quiet bool
	// StopToken is the ::stop-commands:: token; random when empty. Set it
	// only in tests.
	StopToken string
	// TextLines is how many lines of each model text part are shown
	// (0: 10; negative: none).
	TextLines int
	// RetryAttempts is the most retries of one model call, shown as
	// "retry 2/5" (0: unknown, "retry 2").
	RetryAttempts int
}

// Console is the human view of a run on stderr: one line per step and per
// tool call (name, short input, ok/error, duration), denials with their
// rule, retries, checks, running tokens and cost, and the outcome. It
// implements Sink and is safe for concurrent use. Close ends any open
// GitHub Actions group.
type Console struct {
	mu      sync.Mutex
	w       io.Writer
	o       ConsoleOptions
	token   string
	calls   map[string]ToolStarted
	pending string // call id of the tool line left open (TTY only)
	inGroup bool
	inStop  bool
	tokens  Tokens
	cost    float64
	costed  bool // some step had a known cost
	// held is a step that finished with reason error, shown once the next
	// event says why (see holdOrFlush); heldPatch is the final patch that
	// came after it.
	held      *StepFinished
	heldPatch *Patch
}

// NewConsole returns a console view writing to w.
func NewConsole(w io.Writer, o ConsoleOptions) *Console {
	if o.TextLines == 0 {
		o.TextLines = 10
	}
	tok := o.StopToken
	if tok == "" {
		tok = "runner-" + strings.ToLower(rand.Text())
	}
	return &Console{w: w, o: o, token: tok, calls: map[string]ToolStarted{}}
}

// Emit implements Sink. The error is the write error, if any.
func (c *Console) Emit(p Payload) error {
	if p == nil {
		return ErrNilPayload
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	c.render(&b, derefPayload(p))
	if b.Len() == 0 {
		return nil
	}
	if _, err := io.WriteString(c.w, b.String()); err != nil {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}

// Close ends an open ::stop-commands:: block and ::group::.
func (c *Console) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	c.flushHeld(&b, "")
	c.endPending(&b)
	c.endGroup(&b)
	if _, err := io.WriteString(c.w, b.String()); err != nil {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}

// render appends p's lines to b.
func (c *Console) render(b *strings.Builder, p Payload) {
	if c.o.Quiet {
		if rf, ok := p.(RunFinished); ok {
			c.runFinished(b, rf)
		}
		return
	}
	if c.holdOrFlush(b, p) {
		return
	}
	switch v := p.(type) {
	case RunStarted:
		c.untrusted(b, c.paint(bold, "runner")+" "+sanitize(v.Task, 80)+c.paint(dim, " · model "+sanitize(v.Model, 80)))
	case StepStarted:
		c.endPending(b)
		c.startGroup(b, fmt.Sprintf("Step %d", v.Step))
	case Text:
		c.text(b, v.Text)
	case ToolStarted:
		c.toolStarted(b, v)
	case ToolCompleted:
		c.toolCompleted(b, v)
	case ToolFailed:
		c.toolFailed(b, v)
	case PermissionDenied:
		c.denied(b, v)
	case Retry:
		c.untrusted(b, "  "+c.paint(yellow, "↻ retry")+" "+c.retryText(v))
	case Compaction:
		c.trusted(b, "  "+c.paint(dim, fmt.Sprintf("compacted history (%s, %s tokens)", v.Reason, formatCount(v.TokensBefore))))
	case StepFinished:
		c.stepFinished(b, v, "")
	case Patch:
		if v.Step == nil {
			c.endGroup(b)
			c.trusted(b, fmt.Sprintf("Changes: %s", diffstat(len(v.Files), v.Additions, v.Deletions)))
			if w := v.IgnoredWritten; w != nil {
				c.untrusted(b, c.ignoredLine(w))
			}
		}
	case CheckStarted:
		c.endPending(b)
		c.startGroup(b, fmt.Sprintf("Check %s (attempt %d)", sanitize(v.Name, 80), v.Attempt))
		c.untrusted(b, "  $ "+oneLine(v.Command, 160))
	case CheckFinished:
		c.checkFinished(b, v)
	case GateFailed:
		c.endGroup(b)
		c.untrusted(b, c.paint(red, "✗ gate "+string(v.Gate))+": "+oneLine(v.Message, 300))
	case NetworkAccess:
		c.endGroup(b)
		c.untrusted(b, c.networkLine(v))
	case Publish:
		c.published(b, v)
	case RunFinished:
		c.runFinished(b, v)
	}
}

// networkLine is a network.access line: "network: allowed host:port (3
// requests)", with the first upstream error when some failed, or, in
// yellow, a denied one.
func (c *Console) networkLine(v NetworkAccess) string {
	hp := net.JoinHostPort(sanitize(v.Host, 120), strconv.Itoa(v.Port))
	n := fmt.Sprintf(" (%d request%s)", v.Requests, map[bool]string{true: "", false: "s"}[v.Requests == 1])
	if !v.Allowed {
		return c.paint(yellow, "network: denied "+hp) + n + ": add it to sandbox.network.allow to allow it"
	}
	if v.Failed > 0 {
		n += fmt.Sprintf(", %d unreachable", v.Failed)
		if v.Error != "" {
			n += ": " + sanitize(v.Error, 200)
		}
	}
	return "network: allowed " + hp + n
}

// trusted writes a line that holds no model- or tool-produced text.
func (c *Console) trusted(b *strings.Builder, line string) {
	c.endPending(b)
	b.WriteString(line)
	b.WriteByte('\n')
}

// untrusted writes a line that may hold model- or tool-produced text:
// under GitHub Actions, inside ::stop-commands::.
func (c *Console) untrusted(b *strings.Builder, line string) {
	c.endPending(b)
	c.stopCommands(b)
	b.WriteString(line)
	b.WriteByte('\n')
}

// stopCommands opens a ::stop-commands:: block when under GitHub Actions.
func (c *Console) stopCommands(b *strings.Builder) {
	if c.o.GitHubActions && !c.inStop {
		b.WriteString("::stop-commands::" + c.token + "\n")
		c.inStop = true
	}
}

// resumeCommands closes the ::stop-commands:: block, if open.
func (c *Console) resumeCommands(b *strings.Builder) {
	if c.inStop {
		b.WriteString("::" + c.token + "::\n")
		c.inStop = false
	}
}

// startGroup ends the current group and opens one titled title.
func (c *Console) startGroup(b *strings.Builder, title string) {
	c.endGroup(b)
	if c.o.GitHubActions {
		b.WriteString("::group::" + title + "\n")
		c.inGroup = true
		return
	}
	b.WriteString(c.paint(bold, title) + "\n")
}

// endGroup closes stop-commands and the group, if open.
func (c *Console) endGroup(b *strings.Builder) {
	c.resumeCommands(b)
	if c.inGroup {
		b.WriteString("::endgroup::\n")
		c.inGroup = false
	}
}

// endPending terminates a tool line left open for a live update.
func (c *Console) endPending(b *strings.Builder) {
	if c.pending != "" {
		b.WriteByte('\n')
		c.pending = ""
	}
}
