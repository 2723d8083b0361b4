package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// runCall runs one complete tool call and records its outcome in its part
// (the pending part of the tool-input events with id key, if any).
func (s *Session) runCall(ctx context.Context, t *turn, key string, call *llm.ToolCall) {
	p := t.toolPart(key, call.NameAsSent)
	tp := p.Tool
	if tp.State != ToolPending { // a duplicate tool-call event: already handled
		return
	}
	tp.Call = *call
	tp.State = ToolRunning
	tp.Start = s.cfg.Now()
	t.ran++
	s.emit(event.ToolStarted{
		Step:       t.step,
		CallID:     call.ID,
		Tool:       call.Name,
		MCP:        s.origin(call.Name),
		ToolAsSent: asSent(call),
		Input:      call.Arguments,
		InputRaw:   call.ArgumentsRaw,
	})
	repeated := s.trackCall(call)
	res, err := s.callTool(ctx, t, call, repeated)
	tp.End = s.cfg.Now()
	s.record(t, tp, res, err)
}

// asSent is the name as sent when it differs from the resolved name.
func asSent(call *llm.ToolCall) string {
	if call.NameAsSent == call.Name {
		return ""
	}
	return call.NameAsSent
}

// callTool decides and runs a call. Anything the model should read and
// react to is an error Result; a Go error is a tool's machinery failure.
func (s *Session) callTool(ctx context.Context, t *turn, call *llm.ToolCall, repeated bool) (tools.Result, error) {
	structured := s.schema != nil && call.Name == StructuredOutputTool
	if t.last && !structured {
		return errorResult("tools are disabled on the last step of the run; reply with your final message"), nil
	}
	if structured {
		return s.structuredCall(t, call), nil
	}
	if call.ArgumentsInvalid {
		return errorResult(fmt.Sprintf("invalid arguments for %s: not a valid JSON object: %s",
			call.Name, clip(call.ArgumentsRaw, 200))), nil
	}
	tool, ok := s.tools[call.Name]
	if !ok {
		names := strings.Join(s.toolNames(), ", ")
		if names == "" {
			names = "none (the spec's permissions allow no tool)"
		}
		return errorResult(fmt.Sprintf("unknown tool %q; available tools: %s", call.NameAsSent, names)), nil
	}
	if repeated {
		if d := s.doomLoopDenial(call.Name); d != nil {
			return tools.Result{IsError: true, Denial: d, Output: doomLoopMessage(call.Name)}, nil
		}
	}
	input := call.Arguments
	if len(input) == 0 {
		input = []byte("{}")
	}
	return s.execTool(ctx, tool, tools.Call{ID: call.ID, Input: input})
}

// execTool runs a tool under the tool timeout; a panic becomes an error.
func (s *Session) execTool(ctx context.Context, tool tools.Tool, call tools.Call) (res tools.Result, err error) {
	tctx := ctx
	if d := s.cfg.Limits.ToolTimeout; d > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = tools.Result{}, fmt.Errorf("%w: %v", ErrToolPanic, r)
		}
	}()
	res, err = tool.Run(tctx, call)
	if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("tool timed out after %s: %w", s.cfg.Limits.ToolTimeout, err)
	}
	return res, err
}

// record stores a call's outcome in its part and emits the events.
func (s *Session) record(t *turn, tp *ToolPart, res tools.Result, err error) {
	name := tp.Call.Name
	origin := s.origin(name)
	base := event.ToolFailed{Step: t.step, CallID: tp.Call.ID, Tool: name, MCP: origin, DurationMS: tp.durationMS()}
	tp.Metadata = res.Metadata
	switch {
	case err != nil:
		tp.State, tp.Error = ToolError, err.Error()
	case res.Denial != nil:
		s.denials++
		tp.State, tp.Denied = ToolError, true
		tp.Error = res.Output
		if tp.Error == "" {
			tp.Error = "permission denied: " + res.Denial.Reason
		}
		s.emit(event.PermissionDenied{Step: t.step, CallID: tp.Call.ID, Tool: name, MCP: origin,
			Permission: res.Denial.Permission, Pattern: res.Denial.Pattern,
			Rule: res.Denial.Rule, Protection: res.Denial.Protection, Reason: res.Denial.Reason})
		base.Denied = true
		s.deniedLast = fmt.Sprintf("%s %s", name, res.Denial.Pattern)
	case res.IsError:
		tp.State, tp.Error = ToolError, res.Output
		if s.unknownTool(name) {
			// Like a denial, the call could not run: an answer after it is unverified.
			s.deniedLast = fmt.Sprintf("unknown tool %q", cmp.Or(tp.Call.NameAsSent, name))
		}
	default:
		s.deniedLast = "" // a call that succeeded after the denial: the agent went another way
		tp.State, tp.Output = ToolCompleted, res.Output
		tp.touched, tp.touchedAll = res.Touched, res.TouchedUnknown
		s.emit(event.ToolCompleted{Step: t.step, CallID: tp.Call.ID, Tool: name, MCP: origin, Output: res.Output,
			Truncated: res.Truncated, DurationMS: base.DurationMS, Metadata: res.Metadata})
		return
	}
	if err == nil { // a failed command may still have written files
		tp.touched, tp.touchedAll = res.Touched, res.TouchedUnknown
	}
	base.Error = tp.Error
	s.emit(base)
}

// origin names the MCP server and tool behind a tool name, nil for a
// built-in or unknown tool.
func (s *Session) origin(name string) *event.MCPTool {
	server, tool, ok := tools.OriginOf(s.tools[name])
	if !ok {
		return nil
	}
	return &event.MCPTool{Server: server, Tool: tool}
}

// unknownTool reports whether call names a tool the run does not offer.
func (s *Session) unknownTool(name string) bool {
	if s.schema != nil && name == StructuredOutputTool {
		return false
	}
	_, ok := s.tools[name]
	return !ok
}

// errorResult is a Result the model reads as a failure.
func errorResult(msg string) tools.Result { return tools.Result{Output: msg, IsError: true} }

// toolNames lists the offered tool names, sorted.
func (s *Session) toolNames() []string {
	names := make([]string, 0, len(s.defs))
	for _, d := range s.defs {
		names = append(names, d.Name)
	}
	sort.Strings(names)
	return names
}

// clip shortens s to n bytes for messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
