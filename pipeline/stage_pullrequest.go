package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/event"
)

// Commit identity of the pull request branch: the Actions bot.
const (
	prAuthorName  = "github-actions[bot]"
	prAuthorEmail = "41898282+github-actions[bot]@users.noreply.github.com"
)

// pullRequestWanted: RUNNER_PULL_REQUEST ("true"/"false", the action's
// input) wins over the spec's github.pull_request.
func (r *execRun) pullRequestWanted() bool {
	switch r.getenv("RUNNER_PULL_REQUEST") {
	case "true":
		return true
	case "false":
		return false
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
	base, err := headCommit(r.workTree)
	if err != nil {
		return "", err
	}
	ps := r.prSpec(base)
	data := spec.TemplateData{Inputs: r.inputs, Event: r.gh.Event.Event, GitHub: r.gh.Event.GitHub.Map()}
	var branch, title, body string
	for _, f := range []struct {
		key, text string
		dst       *string
	}{{"branch", ps.Branch, &branch}, {"title", ps.Title, &title}, {"body", ps.Body, &body}} {
		if *f.dst, err = r.spec.RenderTemplate("github.pull_request."+f.key, f.text, data); err != nil {
			return "", err
		}
	}
	push := github.PushOptions{RepoDir: r.workTree, BaseCommit: base, WorkTree: r.workTree, Paths: r.changedPaths(),
		Branch: branch, AuthorName: prAuthorName, AuthorEmail: prAuthorEmail, Message: title}
	pr := github.PROptions{
		Base:  firstNonEmpty(r.gh.Event.GitHub.BaseRef, strings.TrimPrefix(r.gh.Env.Ref, "refs/heads/")),
		Title: title, Body: firstNonEmpty(body, r.redactor.Redact(r.result.FinalMessage)),
		Draft: ps.Draft, Labels: ps.Labels,
		Provenance: github.Provenance{Task: r.spec.Name, RunURL: r.gh.Env.RunURL(), Model: r.modelName,
			CostUSD: r.result.CostUSD, Checks: r.checkProvenance()},
	}
	url, _, _, err := r.gh.PublishPullRequest(ctx, push, pr)
	if err != nil {
		return "", fmt.Errorf("pull request: %w", err)
	}
	return url, nil
}

// prSpec is the spec's pull_request block, or the defaults when the action
// asked for a pull request the spec does not describe.
func (r *execRun) prSpec(base string) spec.PullRequest {
	if p := r.spec.GitHub.PullRequest; p != nil {
		return *p
	}
	branch, err := github.BranchName(github.DefaultBranchTemplate, github.NewBranchData(r.spec.Name, r.gh.Event, r.runID, base))
	if err != nil {
		branch = "runner/" + r.spec.Name + "/" + r.runID
	}
	return spec.PullRequest{Branch: branch, Title: "runner: " + r.spec.Name, Draft: true}
}

// changedPaths are the files of the final patch, both sides of renames.
func (r *execRun) changedPaths() []string {
	var out []string
	for _, f := range r.files {
		out = append(out, f.Path)
		if f.OldPath != "" {
			out = append(out, f.OldPath)
		}
	}
	return out
}

// checkProvenance is the last result of each check.
func (r *execRun) checkProvenance() []github.CheckResult {
	out := make([]github.CheckResult, 0, len(r.lastChecks))
	for _, c := range r.lastChecks {
		out = append(out, github.CheckResult{Name: c.check.Name, Passed: c.passed})
	}
	return out
}

// headCommit is the commit HEAD names in the work tree's repository.
func headCommit(dir string) (string, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return "", fmt.Errorf("pull request: open repository: %w", err)
	}
	head, err := repo.Head()
	if err != nil {
		return "", fmt.Errorf("pull request: HEAD: %w", err)
	}
	return head.Hash().String(), nil
}
