package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed43ef5acb/runner/internal/workflowcmd"

	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// Check defaults.
const (
	// DefaultCheckTimeout bounds a check whose spec gives no timeout.
	DefaultCheckTimeout = 10 * time.Minute
	// checkOutputBytes bounds the output kept of one check (head and tail)
	// for the event and the feedback message.
	checkOutputBytes = 16_000
)

// checkResult is one check's outcome.
type checkResult struct {
	check  spec.Check
	passed bool
	exit   int
	output string
	// cancelled: the run was stopped while the check ran (killed).
	cancelled bool
	// refresh is what the sandbox changed before the check (new covers).
	refresh *event.SandboxRefresh
}

// runChecks runs the spec's checks after the agent finished. When one
// fails and retries are left, the failing output goes back to the same
// session as a user message and the checks run again once it finishes.
// Checks still failing at the end set checksErr (status failed).
func (r *execRun) runChecks(ctx context.Context) error {
	switch {
	case len(r.spec.Checks) == 0:
		return skip("the task has no checks")
	case r.result.Status != event.StatusSuccess:
		return skip("the agent ended with status %s", r.result.Status)
	case r.sandbox != nil && r.sandbox.Err() != nil:
		return fmt.Errorf("%w: the checks cannot run: %w", ErrUsage, r.sandbox.Err())
	}
	for attempt := 1; ; attempt++ {
		failed, err := r.checkOnce(ctx, attempt)
		if err != nil {
			return err
		}
		if len(failed) == 0 {
			r.checksErr = nil
			return nil
		}
		r.checksErr = fmt.Errorf("check %s failed (attempt %d of %d)", failed[0].check.Name, attempt, r.spec.Retries+1)
		if attempt > r.spec.Retries {
			r.annotateChecks(failed)
			return nil
		}
		res, err := r.session.Continue(ctx, r.redactor.Redact(feedback(failed)))
		if err != nil {
			return fmt.Errorf("%w: continue after checks: %w", ErrInfra, err)
		}
		r.result = res
		if ctx.Err() != nil {
			return errCancelled(ctx)
		}
		if res.Status != event.StatusSuccess {
			return nil // the agent's status is the run's
		}
	}
}

// checkOnce runs every check once and returns the failed ones.
func (r *execRun) checkOnce(ctx context.Context, attempt int) ([]checkResult, error) {
	var failed, results []checkResult
	for _, c := range r.spec.Checks {
		if err := r.emit(event.CheckStarted{Name: c.Name, Command: c.Run, Attempt: attempt}); err != nil {
			return nil, err
		}
		start := time.Now()
		res, err := r.runCheck(ctx, c)
		if err != nil {
			return nil, err
		}
		if err := r.emit(event.CheckFinished{
			Name: c.Name, Command: c.Run, Attempt: attempt, ExitCode: res.exit,
			Passed: res.passed, Output: res.output, DurationMS: time.Since(start).Milliseconds(),
			SandboxRefresh: res.refresh, Hint: r.checkHint(res.passed || res.cancelled, res.output), Cancelled: res.cancelled,
		}); err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, errCancelled(ctx)
		}
		if !res.passed {
			failed = append(failed, res)
		}
		results = append(results, res)
	}
	r.lastChecks = results
	return failed, nil
}

// runCheck runs one check with `bash -c` in the work tree. It reuses the
// bash tool without its permission guard (checks come from the spec, not
// from the model, and are trusted), so it gets the same scrubbed
// environment, process-group kill on timeout and bounded output.
func (r *execRun) runCheck(ctx context.Context, c spec.Check) (checkResult, error) {
	env := r.toolEnv()
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	env.BashTimeout, env.MaxBashTimeout, env.MaxOutputBytes = timeout, timeout, checkOutputBytes
	bash := tools.NewBash(env)
	input, err := json.Marshal(tools.BashParams{Command: c.Run})
	if err != nil {
		return checkResult{}, fmt.Errorf("%w: check %s: %w", ErrInfra, c.Name, err)
	}
	res, err := bash.Run(ctx, tools.Call{ID: "check-" + c.Name, Input: input})
	r.afterCommand() // before check.finished and the feedback carry its output
	if err != nil && ctx.Err() == nil {
		return checkResult{}, fmt.Errorf("%w: check %s: %w", ErrInfra, c.Name, err)
	}
	exit, _ := res.Metadata["exit_code"].(int)
	if res.IsError && exit == 0 {
		exit = -1 // killed: timed out or cancelled
	}
	out := checkResult{check: c, passed: !res.IsError, exit: exit, output: res.Output, cancelled: res.IsError && ctx.Err() != nil}
	if ref, ok := res.Metadata["sandbox_refresh"].(*sandbox.Refresh); ok {
		out.refresh = &event.SandboxRefresh{Hidden: ref.Hidden, Reason: ref.Reason}
	}
	return out, nil
}

// checkHint is check.finished's hint for a check that failed in the
// sandbox with an output that suggests the sandbox's doing: what it takes
// away and which spec key gives it back. It is "" when the check passed,
// ran unsandboxed, or its output names no such cause (sandboxCauses).
func (r *execRun) checkHint(passed bool, output string) string {
	if passed || r.sandbox == nil || r.sandbox.Mode() == sandbox.ModeOff {
		return ""
	}
	network, files := sandboxCauses(output)
	var parts []string
	switch sb := r.spec.Sandbox; {
	case !network, sb.Network:
	case len(sb.Allow) > 0:
		parts = append(parts, "network only to "+strings.Join(sb.Allow, ", ")+" (sandbox.network.allow)")
	default:
		parts = append(parts, "no network (sandbox.network opens it)")
	}
	if files {
		parts = append(parts, "a private $HOME and $TMPDIR", "writes only in the work tree and sandbox.writable")
	}
	if len(parts) == 0 {
		return ""
	}
	return "checks run in the sandbox: " + strings.Join(parts, ", ")
}

// sandboxCauses reports whether a failed command's output suggests a
// missing network or a refused write, by the words such errors use.
func sandboxCauses(output string) (network, files bool) {
	networkWords := []string{"could not resolve", "name resolution", "no such host", "name or service not known",
		"network is unreachable", "connection refused", "dial tcp", "dial udp", "getaddrinfo", "enotfound",
		"eai_again", "econnrefused", "enetunreach", "failed to establish a new connection", "proxyconnect",
		"could not connect", "unable to connect", "connection timed out"}
	fileWords := []string{"read-only file system", "permission denied", "operation not permitted",
		"erofs", "eacces", "eperm"}
	low := strings.ToLower(output)
	has := func(words []string) bool {
		return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(low, w) })
	}
	return has(networkWords), has(fileWords)
}

// feedback is the user message that hands failing checks back to the agent.
func feedback(failed []checkResult) string {
	var b strings.Builder
	b.WriteString("The task's checks ran after you finished, and some failed. ")
	b.WriteString("Fix the cause (do not weaken the checks), then finish with a short answer.\n")
	for _, f := range failed {
		fmt.Fprintf(&b, "\nCheck %q (`%s`) failed with exit code %d. Its output:\n\n```\n%s\n```\n",
			f.check.Name, f.check.Run, f.exit, strings.TrimRight(f.output, "\n"))
	}
	return b.String()
}

// annotateChecks writes one ::error per check still failing at the end
// (under GitHub Actions).
func (r *execRun) annotateChecks(failed []checkResult) {
	for _, c := range failed {
		r.annotate(workflowcmd.Annotation{Level: workflowcmd.Error, Title: "runner: check " + c.check.Name,
			Message: fmt.Sprintf("check %s failed (exit %d): %s", c.check.Name, c.exit, c.check.Run)})
	}
}
