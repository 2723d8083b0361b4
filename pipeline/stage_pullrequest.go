package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/event"
)

// pullRequestWanted: RUNNER_PULL_REQUEST (true/false in any case, the action's
// input) wins over the spec's github.pull_request.
func (r *execRun) pullRequestWanted() bool {
	if on, set := r.githubSwitch("RUNNER_PULL_REQUEST"); set {
		return on
	}
	return r.spec.GitHub.PullRequest != nil
}

// openPullRequest pushes the run's changes on the spec's branch (on top of
// the work tree's HEAD, the run's base) and opens or updates the pull
// request. It returns "" without error when there is nothing to publish.
func (r *execRun) openPullRequest(ctx context.Context, st *runStatus) (string, error) {
	switch {
	case !r.pullRequestWanted():
		return "", nil
	case st.Status != event.StatusSuccess:
		fmt.Fprintf(r.opts.Stderr, "runner: no pull request: the run ended with status %s\n", st.Status)
		return "", nil
	case len(r.files) == 0:
		fmt.Fprintln(r.opts.Stderr, "runner: no pull request: the run changed no files")
		return "", nil
	}
	base, err := github.HeadCommit(r.workTree)
	if err != nil {
		return "", err
	}
	req, err := r.prRequest(base)
	if err != nil {
		return "", err
	}
	plan, err := github.PlanPullRequest(req)
	if err != nil {
		return "", fmt.Errorf("pull request: %w", err)
	}
	prBase := cmp.Or(r.gh.Event.GitHub.BaseRef, strings.TrimPrefix(r.gh.Env.Ref, "refs/heads/"))
	// The URL is kept with an error: a pull request opened whose labels
	// failed is still there.
	push := plan.Push(r.workTree, base, r.workTree)
	push.Pushed = func(branch, commit string) { r.pushedBranch, r.pushedCommit = branch, commit }
	url, number, _, err := r.gh.PublishPullRequest(ctx, push, plan.PR("", "", prBase))
	r.prNumber = number
	if err != nil {
		return url, fmt.Errorf("pull request: %w", err)
	}
	return url, nil
}

// prRequest is the pull request this run asks for: the spec's
// github.pull_request rendered with the inputs and the event, committed by
// the Actions bot, a draft by default, the final message as the body when
// the spec gives none.
func (r *execRun) prRequest(base string) (github.PRRequest, error) {
	texts, err := PullRequestTexts(r.spec, spec.TemplateData{Inputs: r.inputs, Event: r.gh.Event.Event, GitHub: r.gh.Event.GitHub.Map()})
	if err != nil {
		return github.PRRequest{}, err
	}
	return github.PRRequest{
		Task: r.spec.Name, Spec: texts, BranchData: github.NewBranchData(r.spec.Name, r.gh.Event, r.runID, base),
		Body: r.redactor.Redact(r.result.FinalMessage), Draft: true,
		AuthorName: github.ActionsAuthorName, AuthorEmail: github.ActionsAuthorEmail,
		Files: eventFiles(r.files),
		Provenance: github.Provenance{Task: r.spec.Name, RunURL: r.gh.Env.RunURL(), Model: r.modelName,
			CostUSD: r.result.CostUSD, Checks: r.checkProvenance(), History: r.historyRef()},
	}, nil
}

// PullRequestTexts is the task's github.pull_request block rendered with
// data, as the pull request plan wants it; nil when the task asks for none.
// `runner exec` and `runner batch publish` both use it.
func PullRequestTexts(task *spec.Spec, data spec.TemplateData) (*github.PRTexts, error) {
	pr, err := task.RenderPullRequest(data)
	if pr == nil || err != nil {
		return nil, err
	}
	return &github.PRTexts{Branch: pr.Branch, Title: pr.Title, Body: pr.Body, Draft: pr.Draft, Labels: pr.Labels}, nil
}

// checkProvenance is the last result of each check.
func (r *execRun) checkProvenance() []github.CheckResult {
	out := make([]github.CheckResult, 0, len(r.lastChecks))
	for _, c := range r.lastChecks {
		out = append(out, github.CheckResult{Name: c.check.Name, Passed: c.passed})
	}
	return out
}
