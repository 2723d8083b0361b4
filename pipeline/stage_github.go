package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/seed43ef5acb/runner/runner/report"

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
// gate (RUNNER_TRIGGER, RUNNER_ALLOW_BOTS, RUNNER_ALLOW_EVENTS) and renders the prompt with the
// event's data ({{ .Event.… }}, {{ .GitHub.… }}).
func (r *execRun) setupGitHub(ctx context.Context) error {
	if !r.inActions() {
		if r.opts.PR > 0 {
			return fmt.Errorf("%w: --pr %d: only under GitHub Actions (GITHUB_ACTIONS=true), where the runner can post to the pull request",
				ErrUsage, r.opts.PR)
		}
		return skip("not running in GitHub Actions")
	}
	if err := r.checkGitHubSwitches(); err != nil {
		return err
	}
	a, err := github.Setup(ctx, r.environMap(), &http.Client{Transport: r.httpTransport()})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInfra, err) // the github package's errors say "github: "
	}
	if r.opts.PR > 0 {
		if err := a.UsePullRequest(ctx, r.opts.PR); err != nil {
			return fmt.Errorf("%w: --pr %d: %w", ErrInfra, r.opts.PR, err)
		}
	}
	if !a.HasToken() {
		r.noTokenWarning()
	}
	d, err := a.Gate(ctx, r.getenv("RUNNER_TRIGGER"), r.getenv("RUNNER_ALLOW_BOTS"), r.getenv("RUNNER_ALLOW_EVENTS"))
	if err != nil {
		return fmt.Errorf("%w: trigger gate: %w", ErrInfra, err)
	}
	if !d.Run {
		r.annotate(workflowcmd.Annotation{Level: workflowcmd.Notice, Title: "runner: not run", Message: d.Reason})
		if err := r.setupSummary("not run", d.Reason); err != nil {
			return fmt.Errorf("%w: %w", ErrInfra, err)
		}
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

// writeGitHubOutputs, last of all, appends the report to the step summary
// and writes the step outputs, every URL and the final status included.
func (r *execRun) writeGitHubOutputs(ctx context.Context, st *runStatus) error {
	if r.gh == nil {
		return skip("not running in GitHub Actions")
	}
	var errs []error
	if r.gh.Env.StepSummary != "" {
		md, err := r.renderReport(ctx, nil, report.GitHubCommentMax)
		if err == nil {
			err = github.AppendSummary(r.gh.Env.StepSummary, github.SummaryMarker(r.runID)+md)
		}
		if err == nil && r.reviewSummary != "" { // the findings of a review not posted
			err = github.AppendSummary(r.gh.Env.StepSummary, r.reviewSummary)
		}
		errs = append(errs, err)
	}
	if r.gh.Env.Output != "" {
		errs = append(errs, github.WriteOutputs(r.gh.Env.Output, r.runOutputs(st).List()...))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: github: %w", ErrInfra, err)
	}
	return nil
}

// runOutputs are the step outputs of the run as it ended.
func (r *execRun) runOutputs(st *runStatus) github.RunOutputs {
	out := github.RunOutputs{Status: st.Status, ExitCode: st.Code, PatchPath: r.reportedPatch(),
		EventsPath: r.eventsPath, CostUSD: r.result.CostUSD, CommentURL: r.commentURL, PRURL: r.prURL,
		StructuredOutput: string(r.structuredOutput())}
	out.Denials, out.DeniedCalls = r.denials.snapshot()
	if r.review != nil {
		out.ReviewURL = r.review.URL
	}
	return out
}
