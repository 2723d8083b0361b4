package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/outdir"
	"github.com/seed43ef5acb/runner/tools"
)

// limits are the spec's limits with the command line's overrides.
func (r *execRun) limits() runner.Limits {
	l := r.spec.Limits
	out := runner.Limits{
		MaxSteps: l.MaxSteps, MaxCostUSD: l.MaxCostUSD, MaxTokens: l.MaxTokens,
		Timeout: l.Timeout, ToolTimeout: l.ToolTimeout, MaxDenials: l.MaxDenials,
	}
	if r.opts.MaxSteps > 0 {
		out.MaxSteps = r.opts.MaxSteps
	}
	if r.opts.Timeout > 0 {
		out.Timeout = r.opts.Timeout
	}
	if c := r.opts.MaxCostUSD; c > 0 && (out.MaxCostUSD <= 0 || c < out.MaxCostUSD) {
		out.MaxCostUSD = c
	}
	return out
}

// userMessage is the run's user message: --prompt (or a comment that
// continues a pull request's session), else the spec's rendered prompt.
func (r *execRun) userMessage() string { return cmp.Or(r.opts.Prompt, r.prompt) }

// toolEnv is what the built-in tools and the checks run with: the work
// tree, the process environment (scrubbed by the bash tool) and the
// variables the spec passes on purpose.
func (r *execRun) toolEnv() tools.Env {
	return tools.Env{
		WorkTree:    r.workTree,
		OutputDir:   filepath.Join(r.outDir, outdir.ToolOutputDir),
		Files:       outputFiles{r.outFiles, r.modes},
		Environ:     r.opts.Environ,
		PassEnv:     r.spec.Env,
		BashTimeout: r.limits().ToolTimeout,
		Sandbox:     r.sandbox,
		Protected:   r.protected.holds,
	}
}

// runAgent runs the agent session: the built-in tools behind the spec's
// permissions, the model, per-step snapshots and the event sink.
func (r *execRun) runAgent(ctx context.Context) error {
	rules, err := r.spec.Ruleset()
	if err != nil {
		return err
	}
	if !offersTool(r.spec, rules) {
		fmt.Fprintf(r.opts.Stderr, "runner: warning: %s\n", noToolMessage)
	}
	var schema json.RawMessage
	if r.spec.Output.Schema != nil {
		if schema, err = json.Marshal(r.spec.Output.Schema); err != nil {
			return fmt.Errorf("%w: output schema: %w", spec.ErrInvalidSpec, err)
		}
	}
	limits, exhausted := r.sessionLimits()
	if exhausted != "" { // limits.total: the earlier runs used it all
		if err := r.releaseStart(ctx); err != nil {
			return err
		}
		r.result, r.ranAgent = exhaustedResult(exhausted), true
		r.keepTranscript()
		return nil
	}
	cfg := runner.Config{
		Model: r.model, ModelName: r.modelName, ReasoningEffort: r.effort,
		WorkTree: r.workTree, Instructions: r.spec.Instructions, Prompt: r.userMessage(),
		NoRepoInstructions: !r.spec.ReadsRepoInstructions(),
		Tools:              r.baseTools(r.redactResults(tools.GuardAll(append(tools.Offered(tools.Builtins(r.toolEnv()), rules), r.mcpTools()...), rules, r.workTree))),
		Policy:             rules, Sink: r.sink,
		Snapshotter: stepSnapshots{r},
		Pricer:      r.catalog, Windows: windows{r.catalog},
		Limits: limits, OutputSchema: schema, Backoff: r.opts.Backoff,
		Logger: r.log,
	}
	switch {
	case r.held != nil:
		cfg.History = r.held
	case r.history != nil:
		cfg.History = r.history
	}
	if c := r.continued; c != nil {
		cfg.Resume = &c.history.Transcript
	}
	r.session = runner.NewSession(cfg)
	res, err := r.session.Run(ctx)
	// A session that ran read-only tools only never waited for the base.
	if berr := r.releaseStart(ctx); berr != nil && ctx.Err() == nil {
		return berr
	}
	if err != nil {
		return fmt.Errorf("%w: agent: %w", ErrInfra, err)
	}
	r.totalMessage(&res)
	r.result, r.ranAgent = res, true
	return r.agentError(ctx)
}

// agentError ends the main stages when the run was cancelled during the
// session; any other status than success is the run's own (decideStatus
// reports it and the checks stage skips).
func (r *execRun) agentError(ctx context.Context) error {
	if ctx.Err() != nil {
		return errCancelled(ctx)
	}
	return nil // a status other than success is the run's; the checks stage skips
}
