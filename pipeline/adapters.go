// The adapters the agent loop, the tools and the MCP servers call back
// through into a run, in one place:
//   - redactedTool (tools.Tool): each tool result redacted, afterCommand run
//   - afterCommand: after each tool call and check, modes and secrets
//   - outputFiles (tools.OutputFiles): full outputs mirrored with the log
//   - stepSnapshots (runner.Snapshotter): each step's tree and diff
//   - windows (runner.ContextWindower): the catalog's context windows
//   - mcpCommand (mcp.Set's Command): a stdio server in its sandbox
//
// The history file (history.go) is the runner.HistoryRecorder.

package pipeline

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/seed43ef5acb/runner/internal/mirror"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/pipeline/ownfiles"
	"github.com/seed43ef5acb/runner/runner"
	"github.com/seed43ef5acb/runner/runner/snapshot"
	"github.com/seed43ef5acb/runner/tools/mcp"
	"github.com/seed43ef5acb/runner/tools/sandbox"

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
	vals := append(append([]string{r.opts.APIKey}, r.mcpSecrets...), r.envSecrets...)
	if r.gitCreds != nil {
		vals = append(vals, r.gitCreds.secrets...)
	}
	return vals
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

// afterCommand puts back the modes of the runner's own directories
// (ownfiles.Modes) and learns the secret values of protected files a command
// made or changed (protectedValues): called once each tool call and each
// check has returned, before its output is redacted.
func (r *execRun) afterCommand() {
	r.modes.Restore() // the runner's own directories, for the writes that follow
	var found []string
	ok := false
	if r.sandbox != nil {
		found, ok = r.sandbox.ProtectedFound()
	}
	if !ok {
		rules, err := r.spec.Ruleset()
		if err != nil {
			return
		}
		found = protectedEnvFiles(r.workTree, rules)
	}
	vals := envFileSecrets(r.treeRoot(), r.protected.changed(found))
	if len(vals) == 0 {
		return
	}
	r.redactor.Add(vals...)
	r.toolRedactor.Add(vals...)
}

// outputFiles are the tools' OutputFiles on r.files: bash's and MCP's
// full outputs and MCP servers' stderr are mirrored with the log. A
// create refused for a mode a command changed is tried again once the
// modes are put back (ownfiles.Modes), and the directories made are guarded.
type outputFiles struct {
	set   *mirror.Set
	modes *ownfiles.Modes
}

func (o outputFiles) MkdirAll(dir string) error {
	if err := ownfiles.RetryPerm(o.modes, func() error { return o.set.MkdirAll(dir) }); err != nil {
		return err
	}
	o.modes.Guard(dir)
	return nil
}

func (o outputFiles) CreateTemp(dir, pattern string) (tools.OutputFile, error) {
	var f *mirror.File
	err := ownfiles.RetryPerm(o.modes, func() (err error) { f, err = o.set.CreateTemp(dir, pattern); return err })
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (o outputFiles) Create(path string) (tools.OutputFile, error) {
	var f *mirror.File
	err := ownfiles.RetryPerm(o.modes, func() (err error) { f, err = o.set.Create(path); return err })
	if err != nil {
		return nil, err
	}
	return f, nil
}

// stepSnapshots is the runner's Snapshotter over the run's store: after a
// step that changed files it records the tree (only the touched paths when
// they are known) and diffs it against the base tree. It reads the store,
// the base and the history from the run once the base is recorded.
type stepSnapshots struct{ r *execRun }

// Track implements runner.Snapshotter. After a step whose commands may
// have written anywhere (all), it re-stats what the store's inotify watch
// saw change, or walks the whole tree when the watch cannot be trusted.
func (s stepSnapshots) Track(ctx context.Context, touched []string, all bool) (runner.StepSnapshot, error) {
	if err := s.r.releaseStart(ctx); err != nil { // the tool that changed files waited for it
		return runner.StepSnapshot{}, err
	}
	store, base, history := s.r.store, s.r.base, s.r.history
	var tree snapshot.Tree
	var err error
	how := "paths"
	if all {
		var t snapshot.Tracking
		tree, t, err = store.TrackChanged(ctx, touched)
		how = t.String()
	} else {
		tree, err = store.TrackPaths(ctx, touched)
	}
	if err != nil {
		return runner.StepSnapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	if history != nil {
		_ = history.Tree(string(tree), false) // the history logs its own failures
	}
	files, err := store.Diff(ctx, base, tree)
	if err != nil {
		return runner.StepSnapshot{}, fmt.Errorf("snapshot diff: %w", err)
	}
	return runner.StepSnapshot{Tree: string(tree), Files: eventFiles(files), Tracking: how}, nil
}

// windows adapts the catalog to runner.ContextWindower.
type windows struct{ cat llm.Catalog }

// ContextWindow is the model's context window in tokens, 0 when unknown.
func (w windows) ContextWindow(model string) int {
	if info, ok := w.cat.Lookup(model); ok {
		return info.ContextWindow
	}
	return 0
}

// mcpCommand makes a stdio server's process inside its sandbox; with
// sandbox.mode off, a plain process group that the kernel kills with the
// runner.
func (r *execRun) mcpCommand(ctx context.Context, server string, argv, env []string, dir string) (*exec.Cmd, error) {
	sb := r.mcpSandboxes[server]
	if sb == nil || sb.Mode() == sandbox.ModeOff {
		return mcp.DirectCommand(ctx, server, argv, env, dir)
	}
	return sb.Command(ctx, argv, dir, env)
}
