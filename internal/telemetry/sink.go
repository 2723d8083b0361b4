package telemetry

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed43ef5acb/runner/runner/event"
)

// Attribute keys of the runner's own span and metric attributes; every
// other key is a semconv constant (TestAttributeNames checks both).
const (
	attrRunID       = attribute.Key("runner.run.id")
	attrStatus      = attribute.Key("runner.status")
	attrStep        = attribute.Key("runner.step")
	attrCost        = attribute.Key("runner.cost.usd")
	attrVerdict     = attribute.Key("runner.permission.verdict")
	attrPermission  = attribute.Key("runner.permission")
	attrRule        = attribute.Key("runner.permission.rule")
	attrLayers      = attribute.Key("runner.sandbox.layers")
	attrSandboxMode = attribute.Key("runner.sandbox.mode")
	attrMCPServer   = attribute.Key("runner.mcp.server")
	attrCheckName   = attribute.Key("runner.check.name")
	attrCheckPassed = attribute.Key("runner.check.passed")
	attrAttempt     = attribute.Key("runner.attempt")
	attrGate        = attribute.Key("runner.gate")
	attrTarget      = attribute.Key("runner.publish.target")
	attrTokenType   = attribute.Key("runner.token.type")
	attrDenials     = attribute.Key("runner.denials")
	attrSteps       = attribute.Key("runner.steps")
	attrFiles       = attribute.Key("runner.files_changed")
	attrOutcome     = attribute.Key("runner.tool.outcome")
	attrReason      = attribute.Key("runner.reason")
	attrRetry       = attribute.Key("runner.retry.attempt")
	attrRetryDelay  = attribute.Key("runner.retry.delay_ms")
	attrBatch       = attribute.Key("runner.batch.name")
)

// Run is one run's telemetry: its event sink and the span its HTTP
// requests name (Transport). Runs of a batch at once each have their own.
// A nil *Run does nothing.
type Run struct {
	t *Telemetry
	// current is the span a request made now belongs to (the open chat
	// span, else the run's root): Transport puts it in traceparent.
	current atomic.Pointer[trace.SpanContext]
}

// NewRun starts following one run; nil when t is nil.
func (t *Telemetry) NewRun() *Run {
	if t == nil {
		return nil
	}
	return &Run{t: t}
}

// Sink returns the event sink that turns the run's events into spans and
// metrics; runID names the run. A nil *Run gives event.Discard. Call it
// once per run.
func (r *Run) Sink(runID string) event.Sink {
	if r == nil {
		return event.Discard{}
	}
	return &sink{t: r.t, run: r, runID: runID, tools: map[string]*toolSpan{}, checks: map[string]trace.Span{}}
}

// Sink is NewRun().Sink(runID), for a run that makes no HTTP requests of
// its own.
func (t *Telemetry) Sink(runID string) event.Sink { return t.NewRun().Sink(runID) }

// sink follows one run. Emit is called from several goroutines.
type sink struct {
	t     *Telemetry
	run   *Run
	runID string

	mu        sync.Mutex
	rootCtx   context.Context
	root      trace.Span
	started   time.Time
	model     string
	provider  genaiconv.ProviderNameAttr
	layers    []string
	chat      trace.Span
	chatStart time.Time
	text      []string             // the open chat's text, kept only to export content
	tools     map[string]*toolSpan // by call id
	checks    map[string]trace.Span
}

// toolSpan is an open execute_tool span and what its end needs.
type toolSpan struct {
	span    trace.Span
	tool    string
	denied  bool
	started time.Time
}

func (s *sink) Emit(p event.Payload) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch v := p.(type) {
	case event.RunStarted:
		s.runStarted(v)
	case event.StepStarted:
		s.stepStarted(v)
	case event.Retry:
		s.retry(v)
	case event.StepFinished:
		s.stepFinished(v)
	case event.ToolStarted:
		s.toolStarted(v)
	case event.PermissionDenied:
		s.denied(v)
	case event.ToolCompleted:
		if ts := s.tools[v.CallID]; ts != nil && ts.span != nil && s.t.content {
			ts.span.SetAttributes(semconv.GenAIToolCallResultKey.String(cut(v.Output)))
		}
		s.toolEnded(v.CallID, v.DurationMS, v.Metadata, "")
	case event.ToolFailed:
		s.toolEnded(v.CallID, v.DurationMS, nil, v.Error)
	case event.CheckStarted:
		s.checkStarted(v)
	case event.CheckFinished:
		s.checkFinished(v)
	case event.GateFailed:
		s.instant("gate "+string(v.Gate), codes.Error, v.Message, attrGate.String(string(v.Gate)))
	case event.Publish:
		c := codes.Ok
		if !v.OK {
			c = codes.Error
		}
		s.instant("publish "+string(v.Target), c, v.Error, attrTarget.String(string(v.Target)))
	case event.Text:
		if s.t.content && s.chat != nil {
			s.text = append(s.text, v.Text)
		}
	case event.Compaction:
		s.ensureRoot().AddEvent("compaction", trace.WithAttributes(attrStep.Int(v.Step), attrReason.String(v.Reason)))
	case event.RunFinished:
		s.runFinished(v)
	}
	return nil
}

// tracing reports whether spans are exported.
func (s *sink) tracing() bool { return s.t.tracer != nil }

func (s *sink) runStarted(v event.RunStarted) {
	s.model, s.provider, s.started = v.Model, providerName(v.Wire, v.BaseURL), time.Now()
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(v.Task), semconv.GenAIConversationID(s.runID),
		attrRunID.String(s.runID), semconv.GenAIRequestModel(v.Model), semconv.GenAIProviderNameKey.String(string(s.provider)),
		semconv.ServerAddress(hostOf(v.BaseURL)),
	}
	if v.Sandbox != nil {
		s.layers = v.Sandbox.Layers
		attrs = append(attrs, attrSandboxMode.String(v.Sandbox.Mode), attrLayers.StringSlice(v.Sandbox.Layers))
	}
	if !s.tracing() {
		return
	}
	s.rootCtx, s.root = s.t.tracer.Start(s.t.parent, "invoke_agent "+v.Task,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	s.setCurrent(s.root)
	if b := s.t.batch.Load(); b != nil {
		(*b).AddLink(trace.Link{SpanContext: s.root.SpanContext()})
	}
}

// ensureRoot is the run's span, started on demand when run.started was
// not seen (a span that records nothing without tracing).
func (s *sink) ensureRoot() trace.Span {
	if s.root == nil {
		if !s.tracing() {
			return trace.SpanFromContext(context.Background())
		}
		s.rootCtx, s.root = s.t.tracer.Start(s.t.parent, "invoke_agent", trace.WithAttributes(attrRunID.String(s.runID)))
		s.started = time.Now()
	}
	return s.root
}

// setCurrent makes sp the span outgoing requests name (traceparent).
func (s *sink) setCurrent(sp trace.Span) {
	sc := sp.SpanContext()
	s.run.current.Store(&sc)
}

func (s *sink) stepStarted(v event.StepStarted) {
	s.chatStart, s.text = time.Now(), nil
	s.t.inst.steps.Add(context.Background(), 1)
	if !s.tracing() {
		return
	}
	s.ensureRoot()
	_, s.chat = s.t.tracer.Start(s.rootCtx, "chat "+s.model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(string(s.provider)),
			semconv.GenAIRequestModel(s.model), attrStep.Int(v.Step)))
	s.setCurrent(s.chat)
}

func (s *sink) retry(v event.Retry) {
	sp := s.chat
	if sp == nil {
		sp = s.ensureRoot()
	}
	sp.AddEvent("retry", trace.WithAttributes(attrRetry.Int(v.Attempt),
		semconv.ErrorTypeKey.String(string(v.ErrorClass)), attrRetryDelay.Int64(v.DelayMS)))
}

func (s *sink) stepFinished(v event.StepFinished) {
	ctx := context.Background()
	op := genaiconv.OperationNameChat
	model := semconv.GenAIRequestModel(s.model)
	models := []attribute.KeyValue{model}
	if v.Model != "" {
		models = append(models, semconv.GenAIResponseModel(v.Model))
	}
	if !v.TokensUnknown {
		s.t.inst.tokenUsage.Record(ctx, v.Tokens.Input, op, s.provider, genaiconv.TokenTypeInput, models...)
		s.t.inst.tokenUsage.Record(ctx, v.Tokens.Output, op, s.provider, genaiconv.TokenTypeOutput, models...)
		for typ, n := range map[string]int64{"input": v.Tokens.Input, "output": v.Tokens.Output, "reasoning": v.Tokens.Reasoning,
			"cache_read": v.Tokens.CacheRead, "cache_write": v.Tokens.CacheWrite} {
			s.t.inst.tokens.Add(ctx, n, metric.WithAttributes(attrTokenType.String(typ), model))
		}
	}
	if v.CostUSD != nil {
		s.t.inst.cost.Add(ctx, *v.CostUSD, metric.WithAttributes(model))
	}
	s.t.inst.opDuration.Record(ctx, time.Since(s.chatStart).Seconds(), op, s.provider, models...)
	text := s.text
	s.text = nil
	if s.chat == nil {
		return
	}
	s.chat.SetAttributes(semconv.GenAIResponseFinishReasons(v.FinishReason))
	if v.Model != "" {
		s.chat.SetAttributes(semconv.GenAIResponseModel(v.Model))
	}
	if s.t.content && len(text) > 0 {
		s.chat.SetAttributes(semconv.GenAIOutputMessagesKey.String(outputMessages(text, v.FinishReason)))
	}
	if !v.TokensUnknown {
		s.chat.SetAttributes(semconv.GenAIUsageInputTokens(int(v.Tokens.Input)), semconv.GenAIUsageOutputTokens(int(v.Tokens.Output)),
			semconv.GenAIUsageCacheReadInputTokens(int(v.Tokens.CacheRead)),
			semconv.GenAIUsageCacheCreationInputTokens(int(v.Tokens.CacheWrite)))
	}
	if v.CostUSD != nil {
		s.chat.SetAttributes(attrCost.Float64(*v.CostUSD))
	}
	s.chat.End()
	s.chat = nil
	s.setCurrent(s.ensureRoot())
}

func (s *sink) toolStarted(v event.ToolStarted) {
	ts := &toolSpan{tool: v.Tool, started: time.Now()}
	s.tools[v.CallID] = ts
	if !s.tracing() {
		return
	}
	s.ensureRoot()
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(v.Tool),
		semconv.GenAIToolCallID(v.CallID), semconv.GenAIToolType("function"), attrStep.Int(v.Step)}
	if v.MCP != nil {
		attrs[3] = semconv.GenAIToolType("extension")
		attrs = append(attrs, attrMCPServer.String(v.MCP.Server))
	}
	if v.Tool == "bash" && s.layers != nil {
		attrs = append(attrs, attrLayers.StringSlice(s.layers))
	}
	if s.t.content {
		attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(cut(firstNonEmpty(string(v.Input), v.InputRaw))))
	}
	_, ts.span = s.t.tracer.Start(s.rootCtx, "execute_tool "+v.Tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

func (s *sink) denied(v event.PermissionDenied) {
	s.t.inst.denials.Add(context.Background(), 1, metric.WithAttributes(attrPermission.String(v.Permission)))
	ts := s.tools[v.CallID]
	if ts == nil {
		return
	}
	ts.denied = true
	if ts.span != nil {
		ts.span.SetAttributes(attrVerdict.String("denied"), attrPermission.String(v.Permission), attrRule.String(v.DecidedBy()))
	}
}

func (s *sink) toolEnded(callID string, durMS int64, meta map[string]any, errText string) {
	ts := s.tools[callID]
	if ts == nil {
		return
	}
	delete(s.tools, callID)
	verdict := "allowed"
	if ts.denied {
		verdict = "denied"
	}
	outcome := "ok"
	if errText != "" {
		outcome = "error"
	}
	ctx := context.Background()
	attrs := metric.WithAttributes(semconv.GenAIToolName(ts.tool), attrVerdict.String(verdict), attrOutcome.String(outcome))
	s.t.inst.toolCalls.Add(ctx, 1, attrs)
	s.t.inst.toolDuration.Record(ctx, float64(durMS)/1000, attrs)
	if ts.span == nil {
		return
	}
	ts.span.SetAttributes(attrVerdict.String(verdict))
	if code, ok := meta["exit_code"].(int); ok {
		ts.span.SetAttributes(semconv.ProcessExitCode(code))
	}
	if errText != "" {
		ts.span.SetStatus(codes.Error, firstLine(errText))
	}
	ts.span.End()
}

func (s *sink) checkStarted(v event.CheckStarted) {
	if !s.tracing() {
		return
	}
	s.ensureRoot()
	_, sp := s.t.tracer.Start(s.rootCtx, "check "+v.Name, trace.WithAttributes(attrCheckName.String(v.Name), attrAttempt.Int(v.Attempt)))
	s.checks[checkKey(v.Name, v.Attempt)] = sp
}

func (s *sink) checkFinished(v event.CheckFinished) {
	s.t.inst.checks.Add(context.Background(), 1, metric.WithAttributes(attrCheckName.String(v.Name), attrCheckPassed.Bool(v.Passed)))
	sp := s.checks[checkKey(v.Name, v.Attempt)]
	if sp == nil {
		return
	}
	delete(s.checks, checkKey(v.Name, v.Attempt))
	sp.SetAttributes(semconv.ProcessExitCode(v.ExitCode), attrCheckPassed.Bool(v.Passed))
	if !v.Passed {
		sp.SetStatus(codes.Error, "check failed")
	}
	sp.End()
}

// instant records a step the log reports only once done (a gate, a
// publishing call) as a span of no length.
func (s *sink) instant(name string, c codes.Code, msg string, attrs ...attribute.KeyValue) {
	if !s.tracing() {
		return
	}
	s.ensureRoot()
	_, sp := s.t.tracer.Start(s.rootCtx, name, trace.WithAttributes(attrs...))
	sp.SetStatus(c, firstLine(msg))
	sp.End()
}

func (s *sink) runFinished(v event.RunFinished) {
	ctx := context.Background()
	class := ""
	if v.Error != nil {
		class = string(v.Error.Class)
	}
	attrs := []attribute.KeyValue{attrStatus.String(string(v.Status))}
	if class != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(class))
	}
	s.t.inst.runs.Add(ctx, 1, metric.WithAttributes(attrs...))
	if !s.started.IsZero() {
		s.t.inst.runDuration.Record(ctx, time.Since(s.started).Seconds(), metric.WithAttributes(attrStatus.String(string(v.Status))))
	}
	if !s.tracing() {
		return
	}
	root := s.ensureRoot()
	root.SetAttributes(append(attrs, attrSteps.Int(v.Steps), semconv.GenAIUsageInputTokens(int(v.Tokens.Input)),
		semconv.GenAIUsageOutputTokens(int(v.Tokens.Output)), attrDenials.Int(v.Denials),
		attrFiles.Int(v.FilesChanged))...)
	if v.CostUSD != nil {
		root.SetAttributes(attrCost.Float64(*v.CostUSD))
	}
	if v.Status != event.StatusSuccess {
		msg := string(v.Status)
		if v.Error != nil {
			msg = firstLine(v.Error.Message)
		}
		root.SetStatus(codes.Error, msg)
	}
	s.endOpen()
	root.End()
}

// endOpen ends the spans a run left open (a cancelled model call or tool).
func (s *sink) endOpen() {
	if s.chat != nil {
		s.chat.SetStatus(codes.Error, "the run ended during the model call")
		s.chat.End()
		s.chat = nil
	}
	for id, ts := range s.tools {
		if ts.span != nil {
			ts.span.SetStatus(codes.Error, "the run ended during the tool call")
			ts.span.End()
		}
		delete(s.tools, id)
	}
	for k, sp := range s.checks {
		sp.End()
		delete(s.checks, k)
	}
}

// outputMessages is gen_ai.output.messages for one reply of text parts,
// in the conventions' JSON form, each part cut to maxContent.
func outputMessages(text []string, reason string) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	type message struct {
		Role         string `json:"role"`
		Parts        []part `json:"parts"`
		FinishReason string `json:"finish_reason"`
	}
	m := message{Role: "assistant", FinishReason: conventionFinish(reason)}
	for _, t := range text {
		m.Parts = append(m.Parts, part{Type: "text", Content: cut(t)})
	}
	b, _ := json.Marshal([]message{m})
	return string(b)
}

// conventionFinish maps the event log's finish reasons to the values the
// conventions' output messages schema names.
func conventionFinish(r string) string {
	switch r {
	case "tool-calls":
		return "tool_call"
	case "content-filter":
		return "content_filter"
	}
	return r
}

func checkKey(name string, attempt int) string { return name + "\x00" + strconv.Itoa(attempt) }

// providerName is gen_ai.provider.name for the wire and endpoint.
func providerName(wire, baseURL string) genaiconv.ProviderNameAttr {
	switch h := hostOf(baseURL); {
	case wire == "anthropic":
		return genaiconv.ProviderNameAnthropic
	case strings.HasSuffix(h, ".openai.azure.com"):
		return genaiconv.ProviderNameAzureAIOpenAI
	}
	return genaiconv.ProviderNameOpenAI // the OpenAI API, or an endpoint speaking it
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// cut bounds an exported text to maxContent bytes.
func cut(s string) string {
	if len(s) <= maxContent {
		return s
	}
	return s[:maxContent] + "…[cut]"
}
