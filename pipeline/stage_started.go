package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// holdStart is the "started" stage: run.started at once when the base is
// recorded, else the session's events held until it is (releaseStart).
// Telemetry is not held: it gets run.started now (it reads no base tree)
// and the session's events as they come, so a request's traceparent names
// its step's span.
func (r *execRun) holdStart(ctx context.Context) error {
	if r.baseReady() {
		if err := r.waitBase(); err != nil {
			return err
		}
		return r.emitStarted(ctx)
	}
	r.held = newHeldStart(event.Redacting(r.logSinks, r.redactor))
	if r.liveSink != nil {
		if err := event.Redacting(r.liveSink, r.redactor).Emit(r.startedEvent()); err != nil {
			r.log.Warn("telemetry: run.started", "error", err)
		}
	}
	// run.started and what was held go out through held.next, which
	// redacts them (again: redaction is idempotent).
	r.sink = event.Redacting(event.Multi(r.held, r.liveSink), r.redactor)
	return nil
}

// emitStarted writes run.started.
func (r *execRun) emitStarted(_ context.Context) error {
	r.started = true
	return r.emit(r.startedEvent())
}

// startedEvent is run.started (base_url "replay:<cassette>" when
// replaying).
func (r *execRun) startedEvent() event.RunStarted {
	l := r.limits()
	return event.RunStarted{
		Task: r.spec.Name, SpecPath: r.spec.Path, SpecSHA256: r.specSHA,
		Repo: r.repo, BaseTree: string(r.base), Model: r.modelName, BaseURL: r.endpoint(), Wire: string(r.wire),
		ReasoningEffort: r.effort, RepoInstructions: r.repoInstructions(), RunnerVersion: Version(), Inputs: r.inputs,
		Limits: event.Limits{
			MaxSteps: l.MaxSteps, MaxCostUSD: l.MaxCostUSD, MaxTokens: l.MaxTokens,
			Timeout: durationString(l.Timeout),
			// The effective values: a default applies where the spec is silent.
			ToolTimeout:       durationString(cmp.Or(l.ToolTimeout, tools.DefaultBashTimeout)),
			MaxDenials:        cmp.Or(l.MaxDenials, runner.DefaultMaxDenials),
			BinaryPatchBytes:  r.binaryPatchLimit(),
			StreamIdleTimeout: llm.DefaultIdleTimeout.String(),
			Total:             r.totalEvent(),
		},
		Sandbox:     r.sandboxInfo(),
		Continues:   r.continuedEvent(),
		MCP:         r.mcpInfo(),
		PullRequest: r.prSessionEvent(),
	}
}

// emit writes one event; a log that cannot be written is an infrastructure
// failure.
func (r *execRun) emit(p event.Payload) error {
	if err := r.sink.Emit(p); err != nil {
		return fmt.Errorf("%w: event %s: %w", ErrInfra, p.EventType(), err)
	}
	return nil
}

func durationString(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// repoInstructions names the work tree's file the system prompt takes, or
// "" when the spec turns it off or there is none.
func (r *execRun) repoInstructions() string {
	if !r.spec.ReadsRepoInstructions() || r.workTree == "" {
		return ""
	}
	return runner.RepoInstructionsFile(r.workTree)
}
