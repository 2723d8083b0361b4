package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/internal/workflowcmd"
	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// gateClosed ends a run the trigger gate refused or skipped: no model call,
// nothing written but the step outputs, exit 0.
type gateClosed struct{ reason string }

func (e *gateClosed) Error() string { return "not triggered: " + e.reason }

// notTriggered reports whether err is the gate's verdict.
func notTriggered(err error) bool {
	var g *gateClosed
	return errors.As(err, &g)
}

// inActions reports whether the run is a GitHub Actions step.
func (r *execRun) inActions() bool { return r.getenv("GITHUB_ACTIONS") == "true" }

// environMap is the environment as a map, for the github package.
func (r *execRun) environMap() map[string]string {
	m := make(map[string]string, len(r.opts.Environ))
	for _, kv := range r.opts.Environ {
		if k, v, ok := splitKV(kv); ok {
			m[k] = v
		}
	}
	return m
}

// setupGitHub, under GitHub Actions, loads the event, applies the trigger
// gate (RUNNER_TRIGGER, RUNNER_ALLOW_BOTS) and renders the prompt with the
// event's data ({{ .Event.… }}, {{ .GitHub.… }}).
func (r *execRun) setupGitHub(ctx context.Context) error {
	if !r.inActions() {
		if r.opts.PR > 0 {
			return fmt.Errorf("%w: --pr %d: only under GitHub Actions (GITHUB_ACTIONS=true), where the runner can post to the pull request",
				ErrUsage, r.opts.PR)
		}
		return skip("not running in GitHub Actions")
	}
	a, err := github.Setup(ctx, r.environMap(), nil)
	if err != nil {
		return fmt.Errorf("%w: github: %w", ErrInfra, err)
	}
	if r.opts.PR > 0 {
		if err := a.UsePullRequest(ctx, r.opts.PR); err != nil {
			return fmt.Errorf("%w: --pr %d: %w", ErrInfra, r.opts.PR, err)
		}
	}
	if !a.HasToken() {
		r.noTokenWarning()
	}
	d, err := a.Gate(ctx, r.getenv("RUNNER_TRIGGER"), r.getenv("RUNNER_ALLOW_BOTS"))
	if err != nil {
		return fmt.Errorf("%w: github: trigger gate: %w", ErrInfra, err)
	}
	if !d.Run {
		r.annotate(workflowcmd.Annotation{Level: workflowcmd.Notice, Title: "runner: not run", Message: d.Reason})
		if a.Env.Output != "" {
			if err := github.WriteOutputs(a.Env.Output, d.Outputs()...); err != nil {
				return fmt.Errorf("%w: github outputs: %w", ErrInfra, err)
			}
		}
		return &gateClosed{reason: d.Reason}
	}
	r.gh = a
	r.prompt, err = r.spec.Render(r.given, spec.TemplateData{Event: a.Event.Event, GitHub: a.Event.GitHub.Map()})
	return err
}

// commentWanted: RUNNER_COMMENT ("true"/"false", the action's input) wins
// over the spec's github.comment.
func (r *execRun) commentWanted() bool {
	switch r.getenv("RUNNER_COMMENT") {
	case "true":
		return true
	case "false":
		return false
	}
	return r.spec.GitHub.Comment
}

// startComment posts or resets the sticky comment ("running"). A comment
// that cannot be written is reported and the run goes on.
func (r *execRun) startComment(ctx context.Context) error {
	switch {
	case r.gh == nil:
		return skip("not running in GitHub Actions")
	case !r.gh.HasToken():
		return skip("no token")
	case !r.commentWanted():
		return skip("no comment asked")
	case r.gh.Event.GitHub.Number == 0:
		return skip("the event has no issue or pull request")
	}
	s, err := r.gh.Sticky(ctx, r.spec.Name)
	if err != nil {
		r.deliveryProblem("the sticky comment could not be started", err)
		return skip("comment: %v", err)
	}
	// Kept when Start fails: the final report is tried again at the end.
	r.sticky = s
	if r.pr != nil && r.pr.ref.Valid() { // a run cut short leaves the way to the last history
		s.Header = r.pr.ref.Marker()
	}
	if _, err := s.Start(ctx, r.gh.Env.RunURL()); err != nil {
		r.deliveryProblem("the sticky comment could not be started", err)
		return skip("comment: %v", err)
	}
	return nil
}
