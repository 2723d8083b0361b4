// Command runner is the headless runner for AI coding agents: it runs a
// YAML task spec (model ⇄ tools, deny-by-default permissions) and writes a
// JSONL event log, a patch and a summary. Every command is a struct in this
// package whose Run method delegates to package pipeline; exit codes come
// from pipeline.ExitCode.
//
// Imports: the layers below it (pipeline/batch, pipeline/batch/batchreport,
// pipeline/batch/swebench, pipeline, pipeline/spec, github, runner/report,
// runner/event, tools/sandbox, tools/permission,
// tools/permission/bashcheck, internal/telemetry, internal/workflowcmd);
// nothing imports it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

func main() {
	sandbox.Main() // first: in the sandbox helper re-exec it runs the command and exits
	os.Exit(run())
}

// run is the whole program; SIGINT, SIGTERM and SIGHUP cancel its context.
// SIGPIPE is caught, not ignored: a reader that went away (`runner exec …
// | head`) fails the write to stdout or stderr with EPIPE instead of
// killing the run before it records its end, and the commands the run
// starts still get the default action, since exec resets caught signals.
func run() int {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	streams := Streams{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	return runCLI(ctx, os.Args[1:], streams, os.Environ())
}
