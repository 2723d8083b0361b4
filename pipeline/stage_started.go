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

// emitStarted writes run.started (base_url "replay:<cassette>" when
// replaying).
func (r *execRun) emitStarted(_ context.Context) error {
	r.started = true
	l := r.limits()
	return r.emit(event.RunStarted{
		Task: r.spec.Name, SpecPath: r.spec.Path, SpecSHA256: r.specSHA,
		Repo: r.repo, BaseTree: string(r.base), Model: r.modelName, BaseURL: r.endpoint(), Wire: string(r.wire),
		RunnerVersion: Version(), Inputs: r.inputs,
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
	})
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
