package pipeline

import (
	"context"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
)

// redactResults wraps every tool so that the exact secret values the run
// knows (the protected .env* files' values, the provider key, MCP header
// and environment secrets, secret-looking environment variables) never
// reach the model in a tool result: a sandboxed program can still read a
// protected .env's value where no cover reaches, from git objects (`git
// show HEAD:.env` inside an allowed `make`) or a copy. Token shapes are
// left alone here (the model must read and rewrite files that hold test
// fixtures); the logs redact them as before. Each value becomes
// event.Redacted, a URL's password alone too (secret.Literals).
func (r *execRun) redactResults(ts []tools.Tool) []tools.Tool {
	r.toolRedactor = event.NewLiteralRedactor(r.opts.Environ, r.secretValues()...)
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = &redactedTool{tool: t, red: r.toolRedactor, after: r.afterCommand}
	}
	return out
}

// secretValues are the exact secret values the run knows when it starts
// (besides the environment's): the provider key, the MCP servers' header
// and environment secrets, the protected .env* files' values.
func (r *execRun) secretValues() []string {
	return append(append([]string{r.opts.APIKey}, r.mcpSecrets...), r.envSecrets...)
}

// redactedTool is a tool whose result output has the run's secret values
// replaced (redactResults).
type redactedTool struct {
	tool tools.Tool
	red  *event.Redactor
	// after runs once the tool returned, before its output is redacted
	// (execRun.afterCommand: values a command just made known join red)
	after func()
}

func (t *redactedTool) Info() tools.Info { return t.tool.Info() }

// Unwrap returns the wrapped tool (for tools.OriginOf).
func (t *redactedTool) Unwrap() tools.Tool { return t.tool }

// Run runs the tool and redacts its output.
func (t *redactedTool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	res, err := t.tool.Run(ctx, call)
	if t.after != nil {
		t.after()
	}
	res.Output = t.red.Redact(res.Output)
	return res, err
}
