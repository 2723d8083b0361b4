package runner

import (
	"encoding/json"
	"fmt"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/tools"
	"github.com/seed43ef5acb/runner/tools/permission"
)

// doomLoopThreshold is how many consecutive identical calls raise the
// doom_loop permission (OpenCode's DOOM_LOOP_THRESHOLD).
const doomLoopThreshold = 3

// trackCall remembers a call and reports whether it is the third
// consecutive call of the same tool with the same input.
func (s *Session) trackCall(call *llm.ToolCall) bool {
	key := call.Name + "\x00" + canonicalInput(call)
	if len(s.recent) == doomLoopThreshold {
		copy(s.recent, s.recent[1:])
		s.recent = s.recent[:doomLoopThreshold-1]
	}
	s.recent = append(s.recent, key)
	if len(s.recent) < doomLoopThreshold {
		return false
	}
	for _, k := range s.recent {
		if k != key {
			return false
		}
	}
	return true
}

// canonicalInput is the call's input with object keys sorted and
// whitespace removed, so equal inputs compare equal however sent.
func canonicalInput(call *llm.ToolCall) string {
	if call.ArgumentsInvalid || len(call.Arguments) == 0 {
		return call.ArgumentsRaw
	}
	var v any
	if err := json.Unmarshal(call.Arguments, &v); err != nil {
		return string(call.Arguments)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(call.Arguments)
	}
	return string(b)
}

// doomLoopDenial asks the policy about the doom_loop permission for a tool;
// nil means allowed. No policy denies (headless: nobody can approve).
func (s *Session) doomLoopDenial(tool string) *tools.Denial {
	d := permission.Decision{Permission: permission.DoomLoop, Pattern: tool, Reason: "default deny"}
	if s.cfg.Policy != nil {
		d = s.cfg.Policy.Evaluate(permission.DoomLoop, tool)
	}
	if d.Allowed {
		return nil
	}
	reason := d.Reason
	if reason == "" {
		reason = "default deny"
	}
	return &tools.Denial{Permission: permission.DoomLoop, Pattern: tool, Rule: ruleString(d.Rule), Reason: reason}
}

// ruleString renders the rule that decided, nil for default deny.
func ruleString(r *permission.Rule) *string {
	if r == nil {
		return nil
	}
	s := fmt.Sprintf("%s %q: %s", r.Permission, r.Pattern, r.Action)
	return &s
}

func doomLoopMessage(tool string) string {
	return fmt.Sprintf("permission denied (doom_loop): you called %s %d times in a row with the same input. "+
		"Repeating it will not give a different result; change your approach.", tool, doomLoopThreshold)
}
