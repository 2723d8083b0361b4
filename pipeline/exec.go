package pipeline

import (
	"context"
	"fmt"
)

// Exec runs a task: load and validate the spec, then the stages of the exec
// pipeline. Errors map to exit codes with ExitCode.
//
// For now only the first stage exists: it loads and validates the spec and
// renders the prompt, then returns an error wrapping ErrNotImplemented.
func Exec(ctx context.Context, opts ExecOptions) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("exec: %w: %w", ErrCancelled, err)
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	spec, err := Load(opts.Task)
	if err != nil {
		return err
	}
	inputs, err := ParseInputs(opts.Set)
	if err != nil {
		return err
	}
	if _, err := spec.Render(inputs, TemplateData{}); err != nil {
		return err
	}
	return fmt.Errorf("exec %s: the agent run is %w", spec.Name, ErrNotImplemented)
}
