package pipeline

import (
	"context"
	"sort"
	"strings"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/secret"
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
// event.Redacted.
func (r *execRun) redactResults(ts []tools.Tool) []tools.Tool {
	var lits []string
	seen := map[string]bool{}
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= secret.MinLen && !seen[v] {
			seen[v] = true
			lits = append(lits, v)
		}
	}
	for _, v := range r.envSecrets {
		add(v)
	}
	add(r.opts.APIKey)
	for _, v := range r.mcpSecrets {
		add(v)
	}
	for _, kv := range r.opts.Environ {
		if name, val, ok := strings.Cut(kv, "="); ok && secret.IsName(name) {
			add(val)
		}
	}
	if len(lits) == 0 {
		return ts
	}
	sort.Slice(lits, func(i, j int) bool { return len(lits[i]) > len(lits[j]) }) // a secret holding another goes whole
	pairs := make([]string, 0, 2*len(lits))
	for _, l := range lits {
		pairs = append(pairs, l, event.Redacted)
	}
	rep := strings.NewReplacer(pairs...)
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = &redactedTool{tool: t, rep: rep}
	}
	return out
}

// redactedTool is a tool whose result output has the run's secret values
// replaced (redactResults).
type redactedTool struct {
	tool tools.Tool
	rep  *strings.Replacer
}

func (t *redactedTool) Info() tools.Info { return t.tool.Info() }

// Unwrap returns the wrapped tool (for tools.OriginOf).
func (t *redactedTool) Unwrap() tools.Tool { return t.tool }

// Run runs the tool and redacts its output.
func (t *redactedTool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	res, err := t.tool.Run(ctx, call)
	res.Output = t.rep.Replace(res.Output)
	return res, err
}
