package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// Result is the outcome of Run or Continue. Steps, Tokens and CostUSD are
// totals over the whole session.
type Result struct {
	Status           event.Status
	FinalMessage     string // the last assistant text
	StructuredOutput json.RawMessage
	Steps            int
	Tokens           event.Tokens
	CostUSD          *float64 // nil when any call's price is unknown
	Denials          int
	// DeniedLast is the last denied call ("tool pattern") when no tool
	// call succeeded after it: the agent stopped without working around
	// the denial. "" otherwise.
	DeniedLast  string
	Compactions int
	// Err is a *Error when Status is not success.
	Err error
}

// RunError is the error block of run.finished, nil on success.
func (r Result) RunError() *event.RunError {
	var e *Error
	if !errors.As(r.Err, &e) {
		if r.Err == nil {
			return nil
		}
		return &event.RunError{Class: event.ClassInternal, Message: r.Err.Error()}
	}
	return &event.RunError{Class: e.Class, Message: e.Message}
}

// Session is one conversation with the model. It is not safe for
// concurrent use: call Run once, then Continue as often as needed.
type Session struct {
	cfg     Config
	tools   map[string]tools.Tool
	defs    []llm.ToolDef
	schema  *jsonschema.Schema
	initErr error

	started  bool
	deadline time.Time
	system   string
	msgs     []*Message
	wire     []llm.Message // the wire form of msgs, append-only

	step        int       // steps completed or in progress
	stepEmitted int       // the last step whose step.started went out
	stepClosed  int       // the last step whose step.finished went out
	stepStart   time.Time // when the open step started
	lastNoted   bool      // the last-step note was added
	usage       llm.Usage
	lastUsage   *llm.Usage
	cost        float64
	costUnknown bool
	// failedUsage is what the open step's failed attempts used (their
	// usage when the provider sent it); failedUnknown: one of them got
	// output but no usage (a cancel during a tool call, a stream cut).
	failedUsage   llm.Usage
	failedCost    float64
	failedUnknown bool
	// failedUnpriced: a failed attempt's usage came but had no price, so
	// the step's cost is unknown although its tokens are known.
	failedUnpriced bool

	denials     int
	compactions int
	outputTries int
	lengthTries int
	pauses      int      // pause_turn replies in a row
	recent      []string // doom-loop keys of the latest tool calls
	backoff     *backoff.ExponentialBackOff
	failures    int // consecutive failed attempts of the current step
	final       string
	emitErr     bool
	historyErr  bool
	deniedLast  string // the last denied call ("tool pattern") when no call succeeded after it
}

// outcome is how a Run or Continue ended.
type outcome struct {
	status     event.Status
	err        *Error
	structured json.RawMessage
}

// NewSession prepares a session; configuration errors surface from Run.
func NewSession(cfg Config) *Session {
	cfg = cfg.withDefaults()
	s := &Session{cfg: cfg, tools: map[string]tools.Tool{}}
	s.initErr = s.registerTools()
	if cfg.Prompt == "" {
		s.initErr = ErrNoPrompt
	}
	if cfg.Model == nil {
		s.initErr = ErrNoModel
	}
	s.backoff = &backoff.ExponentialBackOff{
		InitialInterval:     cfg.Backoff.Base,
		RandomizationFactor: cfg.Backoff.Jitter,
		Multiplier:          2,
		MaxInterval:         cfg.Backoff.Max,
	}
	s.backoff.Reset()
	return s
}

// registerTools indexes the tools by name and builds their definitions,
// sorted by name so the prompt is byte-stable, with StructuredOutput when
// the run has an output schema.
func (s *Session) registerTools() error {
	for _, t := range s.cfg.Tools {
		info := t.Info()
		if _, dup := s.tools[info.Name]; dup {
			return fmt.Errorf("%w: %q", ErrDuplicateTool, info.Name)
		}
		s.tools[info.Name] = t
		s.defs = append(s.defs, llm.ToolDef{Name: info.Name, Description: info.Description, Parameters: info.Parameters})
	}
	sort.Slice(s.defs, func(i, j int) bool { return s.defs[i].Name < s.defs[j].Name })
	if len(s.cfg.OutputSchema) == 0 {
		return nil
	}
	if _, dup := s.tools[StructuredOutputTool]; dup {
		return fmt.Errorf("%w: %q is reserved for structured output", ErrDuplicateTool, StructuredOutputTool)
	}
	var err error
	if s.schema, err = compileSchema(s.cfg.OutputSchema); err != nil {
		return err
	}
	s.defs = append(s.defs, structuredToolDef(s.cfg.OutputSchema))
	sort.Slice(s.defs, func(i, j int) bool { return s.defs[i].Name < s.defs[j].Name })
	return nil
}

// Run runs a whole agent session on cfg.Prompt; see Session.Run.
func Run(ctx context.Context, cfg Config) (Result, error) {
	return NewSession(cfg).Run(ctx)
}

// Run starts the session with the configured prompt and drives it until the
// model finishes or a stop rule fires. The error is non-nil only for a bad
// configuration or a second call; every other ending is a Result status.
func (s *Session) Run(ctx context.Context) (Result, error) {
	if s.initErr != nil {
		return Result{}, s.initErr
	}
	if s.started {
		return Result{}, ErrAlreadyStarted
	}
	s.started = true
	if s.cfg.Limits.Timeout > 0 {
		// Contexts run on the wall clock, whatever Config.Now says.
		s.deadline = time.Now().Add(s.cfg.Limits.Timeout)
	}
	s.system = buildSystemPrompt(s.cfg, s.cfg.Now(), s.defs)
	if rt := s.cfg.Resume; rt != nil {
		s.system = rt.System
	}
	s.recordHistory(HistoryRecord{Kind: HistorySystem, System: s.system})
	if rt := s.cfg.Resume; rt != nil && len(rt.Messages) > 0 {
		s.wire = append(s.wire, rt.Messages...)
		s.recordHistory(HistoryRecord{Kind: HistoryMessages, Messages: rt.Messages})
	}
	s.appendMessage(userMessage(s.cfg.Prompt))
	return s.drive(ctx), nil
}

// Continue adds a user message (for example a failing check's output) to
// the same conversation and drives it again. Steps, tokens and cost keep
// accumulating; max_steps and the timeout cover the whole session.
func (s *Session) Continue(ctx context.Context, text string) (Result, error) {
	if !s.started {
		return Result{}, ErrNotStarted
	}
	s.appendMessage(userMessage(text))
	s.final = ""
	s.outputTries = 0
	s.lengthTries = 0
	return s.drive(ctx), nil
}

// Messages returns the session's messages (for inspection; do not modify).
func (s *Session) Messages() []*Message { return s.msgs }

// drive runs the loop under the session deadline and turns any panic into
// a Result with status error, so the caller can always write run.finished.
func (s *Session) drive(ctx context.Context) (res Result) {
	if !s.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadlineCause(ctx, s.deadline, ErrTimeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			s.cfg.Logger.Error("runner panic", "panic", r, "stack", string(debug.Stack()))
			s.closeOpenStep()
			res = s.result(outcome{status: event.StatusError, err: &Error{
				Class: event.ClassInternal, Message: fmt.Sprintf("internal error: %v", r),
			}})
		}
	}()
	out := s.runLoop(ctx)
	s.closeOpenStep()
	return s.result(out)
}

// result assembles the Result of an outcome.
func (s *Session) result(o outcome) Result {
	r := Result{
		Status:           o.status,
		FinalMessage:     s.final,
		StructuredOutput: o.structured,
		Steps:            s.step,
		Tokens:           tokensOf(s.usage),
		Denials:          s.denials,
		DeniedLast:       s.deniedLast,
		Compactions:      s.compactions,
	}
	if s.cfg.Pricer != nil && !s.costUnknown && (s.step == 0 || s.priced()) {
		c := s.cost
		r.CostUSD = &c
	}
	if o.err != nil {
		r.Err = o.err
	}
	return r
}

// priced reports whether the Pricer knows the model's price. A run of an
// unpriced model that made a call has an unknown cost even when no usage
// came back to be priced (a call that hung until the timeout): never 0.
func (s *Session) priced() bool {
	return s.cfg.Pricer.Cost(s.cfg.ModelName, llm.Usage{}) != nil
}

// appendMessage adds a committed message to the history and its wire form.
func (s *Session) appendMessage(m *Message) {
	s.msgs = append(s.msgs, m)
	w := m.wire()
	s.wire = append(s.wire, w...)
	if len(w) > 0 {
		s.recordHistory(HistoryRecord{Kind: HistoryMessages, Step: s.step, Messages: w})
	}
}

// emit sends an event; a sink error (or panic) is logged once and the run
// goes on.
func (s *Session) emit(p event.Payload) {
	if s.cfg.Sink == nil {
		return
	}
	if err := safeEmit(s.cfg.Sink, p); err != nil && !s.emitErr {
		s.emitErr = true
		s.cfg.Logger.Warn("event sink failed; continuing", "type", p.EventType(), "err", err)
	}
}

// safeEmit calls the sink, turning a panic into an error.
func safeEmit(sink event.Sink, p event.Payload) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("event sink panicked: %v", r)
		}
	}()
	return sink.Emit(p)
}

// sinceMS is the time since t in milliseconds, on the session clock.
func (s *Session) sinceMS(t time.Time) int64 {
	return s.cfg.Now().Sub(t).Milliseconds()
}

func tokensOf(u llm.Usage) event.Tokens {
	return event.Tokens{
		Input:      u.InputTokens,
		Output:     u.OutputTokens,
		Reasoning:  u.ReasoningTokens,
		CacheRead:  u.CachedInputTokens,
		CacheWrite: u.CacheWriteTokens,
	}
}
