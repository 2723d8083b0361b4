package event

import (
	"fmt"
	"strconv"
	"strings"
)

// The console says each thing once. Event fields stay complete on their
// own (a permission.denied reason, a retry's error, a run's error message
// may each repeat the class, rule or subject the event also carries); the
// console composes one sentence and drops what a part already says.

// SayOnce joins label and msg as "label: msg", or returns msg alone when it
// already says label, compared case-insensitively (an error that names its
// own class or status is not prefixed again: "cancelled: cancelled (SIGTERM)"
// becomes "cancelled (SIGTERM)"). An empty msg gives label; an empty label
// gives msg.
func SayOnce(label, msg string) string {
	switch {
	case msg == "":
		return label
	case label == "", strings.Contains(strings.ToLower(msg), strings.ToLower(label)):
		return msg
	}
	return label + ": " + msg
}

// denialText is `bash "rm -rf /": no rule allows it (default deny)` or
// `bash "rm -rf /" by rule bash "rm *": deny`, followed by whatever the
// reason adds to that (a sub-command, a protected path, a path outside the
// work tree).
func denialText(v PermissionDenied) string {
	head := sanitize(v.Permission, 40) + " " + quote(oneLine(v.Pattern, 100))
	if v.Rule != nil {
		head += " by rule " + oneLine(*v.Rule, 100)
	}
	extra := oneLine(denialExtra(v), 160)
	switch {
	case extra != "" && v.Rule != nil:
		return head + " (" + extra + ")"
	case extra != "":
		return head + ": " + extra
	case v.Rule == nil:
		return head + ": no rule allows it (default deny)"
	}
	return head
}

// denialExtra is the part of v.Reason that the permission, pattern and rule
// do not already say: a leading `<kind> "<pattern>": ` naming the same
// pattern is dropped, and so is the evaluator's standard sentence for the
// rule or for the default deny.
func denialExtra(v PermissionDenied) string {
	reason := strings.TrimSpace(v.Reason)
	q := strconv.Quote(v.Pattern)
	if i := strings.Index(reason, q+": "); i > 0 && !strings.Contains(strings.TrimSpace(reason[:i]), " ") {
		reason = reason[i+len(q)+2:]
	}
	said := []string{
		fmt.Sprintf("no rule allows %s %s (default deny)", v.Permission, q),
	}
	if v.Rule != nil {
		said = append(said, "denied by rule "+*v.Rule, "rule "+*v.Rule)
	}
	for _, s := range said {
		if reason == s {
			return ""
		}
	}
	return reason
}

// retryText is what follows "retry": "1/5 in 2.0s: provider error
// (retryable, HTTP 503): overloaded"; the class is added only when the
// error does not name it.
func (c *Console) retryText(v Retry) string {
	n := strconv.Itoa(v.Attempt)
	if v.MaxAttempts > 0 {
		n += "/" + strconv.Itoa(v.MaxAttempts)
	} else if c.o.RetryAttempts > 0 {
		n += "/" + strconv.Itoa(c.o.RetryAttempts)
	}
	return fmt.Sprintf("%s in %s: %s", n, FormatMS(v.DelayMS), SayOnce(string(v.ErrorClass), oneLine(v.Error, 160)))
}

// cutBy is what ended a step that finished with reason "error", from the
// run's final status: "cut short by the timeout" or "cut short by the
// cancel"; "" when the run's status does not explain it.
func cutBy(status Status) string {
	switch status {
	case StatusTimeout:
		return "cut short by the timeout"
	case StatusCancelled:
		return "cut short by the cancel"
	}
	return ""
}

// holdOrFlush holds a step that finished with reason error, and the final
// patch after it, until the next event says why the step ended: at
// run.finished with status timeout or cancelled the step's line says it was
// cut short; any other event shows it as is. It reports whether p was held.
func (c *Console) holdOrFlush(b *strings.Builder, p Payload) bool {
	switch v := p.(type) {
	case StepFinished:
		c.flushHeld(b, "")
		if v.FinishReason == "error" {
			c.held = &v
			return true
		}
	case Patch:
		if c.held != nil && v.Step != nil {
			return true // a step's own patch shows nothing
		}
		if c.held != nil {
			c.heldPatch = &v
			return true
		}
	case RunFinished:
		c.flushHeld(b, cutBy(v.Status))
	default:
		c.flushHeld(b, "")
	}
	return false
}

// flushHeld writes the held step (with why as its reason when not "") and
// the held patch.
func (c *Console) flushHeld(b *strings.Builder, why string) {
	held, patch := c.held, c.heldPatch
	c.held, c.heldPatch = nil, nil
	if held != nil {
		c.stepFinished(b, *held, why)
	}
	if patch != nil {
		c.render(b, *patch)
	}
}

// firstOf returns a unless it is empty, else b.
func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
