// Package pipeline turns a task spec (pipeline/spec) into a run: it
// resolves the inputs, renders the prompt and runs the stages of `runner
// exec` (workspace, agent, checks, outputs, publish).
//
// Exit codes of the CLI come from the typed errors in errors.go (and the
// spec's ErrInvalidSpec, ErrInputs and ErrRead), mapped by ExitCode.
//
// Imports: pipeline/spec, pipeline/gate, pipeline/ownfiles, github, runner, runner/report,
// runner/outdir, runner/historyfile, runner/snapshot,
// runner/event, tools, tools/mcp, tools/sandbox, tools/sandbox/netproxy (the
// network allow list's proxy), tools/permission, llm, llm/cloudauth and
// internal/workflowcmd, internal/tempdir, internal/mirror, internal/copytree,
// internal/gitignore (FindRepo: a work tree's prefix in its repository),
// internal/telemetry (spans and metrics from the events),
// internal/safefs (repairs that never follow a symlink),
// secret;
// pipeline/batch and cmd sit above it.
package pipeline
