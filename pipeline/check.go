package pipeline

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/seed43ef5acb/runner/internal/mirror"
	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// Check makes the checks of Exec's setup that need neither a work tree
// nor the network, for task (the spec Exec would load from opts.Task,
// loaded once by a caller that checks many runs) run with opts, and
// returns the error Exec would refuse the run with (exit code 2), or nil:
// the options (ExecOptions.Validate); the inputs and the prompt rendered
// with them; the MCP servers' ${NAME} variables and stdio programs; the
// model, the endpoint and the API key; a cost budget on a model with no
// price (the options' included); a --replay cassette recorded for another
// prompt; the sandbox section (sandbox.writable, mode required without
// every layer, RUNNER_SANDBOX_LAYERS). opts.Repo, opts.Out and
// GitHub Actions' event are not looked at, and nothing is written (a
// --record file is not created). Batch calls it for every repository
// before it clones any, so that a job exec would refuse is found up front
// (pipeline/batch CheckTask), not recorded as the repository's failure.
func Check(ctx context.Context, task *spec.Spec, opts ExecOptions) error {
	r := &execRun{opts: opts, specState: specState{spec: task}, dry: true, start: time.Now(),
		log: slog.New(slog.DiscardHandler), guardState: guardState{outFiles: mirror.New()}}
	r.opts.Stdout, r.opts.Stderr = io.Discard, io.Discard
	stages := []Stage{
		// The same order as Exec's setup stages (setupStages).
		stageFunc{"spec", func(context.Context) error {
			if err := r.opts.Validate(); err != nil {
				return err
			}
			return r.resolveInputs()
		}},
		stageFunc{"mcp-config", r.resolveMCP},
		stageFunc{"model", r.setupModel},
		stageFunc{"replay", r.checkReplay},
		stageFunc{"sandbox", r.checkSandbox},
	}
	return runStages(ctx, r.log, stages)
}
