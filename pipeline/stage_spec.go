package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// loadSpec loads and validates the spec and renders the prompt.
func (r *execRun) loadSpec(ctx context.Context) error {
	if ctx.Err() != nil {
		return errCancelled(ctx)
	}
	if err := r.opts.Validate(); err != nil {
		return err
	}
	task, data, err := r.readSpec()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	r.spec, r.specSHA = task, hex.EncodeToString(sum[:])
	return r.resolveInputs()
}

// readSpec loads the task spec from TaskData or the file Task, and
// returns it with the bytes it was loaded from.
func (r *execRun) readSpec() (*spec.Spec, []byte, error) {
	if r.opts.TaskData != nil {
		task, err := spec.LoadBytes(r.opts.Task, r.opts.TaskData)
		return task, r.opts.TaskData, err
	}
	task, err := spec.Load(r.opts.Task)
	if err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(r.opts.Task)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: read %s: %w", ErrUsage, r.opts.Task, err)
	}
	return task, data, nil
}

// resolveInputs resolves the inputs given against the spec's and renders
// the prompt (in GitHub Actions, later: with the event's data).
func (r *execRun) resolveInputs() error {
	given := maps.Clone(r.opts.Inputs)
	if given == nil {
		given = map[string]string{}
	}
	inputs, err := r.spec.ResolveInputs(given)
	if err != nil {
		return err
	}
	r.inputs, r.given = inputs, given
	if r.inActions() {
		return nil // rendered with the event's data once it is loaded (stage github)
	}
	r.prompt, err = r.spec.Render(given, spec.TemplateData{})
	return err
}

// getenv looks a variable up in the environment cmd passed down.
func (r *execRun) getenv(key string) string {
	for _, kv := range r.opts.Environ {
		if k, v, ok := splitKV(kv); ok && k == key {
			return v
		}
	}
	return ""
}

// splitKV splits "KEY=VALUE".
func splitKV(kv string) (key, value string, ok bool) { return strings.Cut(kv, "=") }
