package batch

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/internal/tempdir"
	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/outdir"
	"github.com/seed43ef5acb/runner/runner/report"
)

// ErrNotGitHub means a repository of the batch is not on the GitHub
// server publishing talks to, so no pull request can be opened for it.
var ErrNotGitHub = github.ErrNotOnServer

// GitHubPublisher is the Publisher of `runner batch publish`: for each
// result it rebuilds the patched tree from the repository's out dir (the
// files the executor saved in TreeDir, the file list of events.jsonl) on
// top of the base commit, pushes it as a branch with the token
// (force-with-lease) and opens or updates the pull request. Publish calls it
// serially; it is not safe for concurrent use.
type GitHubPublisher struct {
	Dir       string         // the batch out dir being published
	Client    *github.Client // API client (github.NewClient)
	ServerURL string         // e.g. https://github.com; repositories must live there
	Token     string         // pushes over HTTPS as x-access-token
	// Remote returns the URL to fetch from and push to for owner/repo;
	// nil means ServerURL/owner/repo.git. Tests point it at local
	// repositories.
	Remote func(owner, repo string) string
	// CacheDir is a clone cache of `batch run` (CacheDir/clones/<id>.git) to
	// read the base commit from before fetching it; "" = Dir/.cache.
	CacheDir string
	Author   string // commit author name; "" = github.DefaultAuthorName
	Email    string // commit author email; "" = github.DefaultAuthorEmail
	// Draft and Labels apply to pull requests whose task spec says
	// nothing of its own.
	Draft  bool
	Labels []string
}

// Publish pushes r's patch as a branch and opens or updates its pull
// request, as github.PlanPullRequest plans it; a rate limit answer is a
// *RetryAfterError.
func (p *GitHubPublisher) Publish(ctx context.Context, r RepoResult, _ string) (string, error) {
	owner, repo, err := github.ParseRepoURL(p.ServerURL, r.Repo)
	if err != nil {
		return "", err
	}
	if r.Commit == "" {
		return "", fmt.Errorf("%s: the result records no base commit", r.ID)
	}
	plan, err := p.plan(ctx, r)
	if err != nil {
		return "", err
	}
	base, err := github.BaseBranch(ctx, p.Client, owner, repo, p.manifestRef(r.ID))
	if err != nil {
		return "", rateLimited(err)
	}
	_, _ = tempdir.Collect("", publishTempPattern) // killed publishers' clones
	dir, err := tempdir.New("", publishTempPattern)
	if err != nil {
		return "", fmt.Errorf("%w: %w", pipeline.ErrInfra, err)
	}
	defer func() { _ = dir.Remove() }() // a leftover is collected by a later start
	clone := filepath.Join(dir.Path(), "repo")
	remote := p.remote(owner, repo)
	if err := github.FetchCommit(ctx, clone, p.baseSources(r.ID, remote), r.Commit, p.Token); err != nil {
		return "", fmt.Errorf("%w: %s: %w", pipeline.ErrInfra, r.ID, err)
	}
	push := plan.Push(clone, r.Commit, filepath.Join(p.Dir, r.ID, TreeDir))
	push.RemoteURL, push.Token = remote, p.Token
	url, _, _, err := github.PublishPullRequest(ctx, p.Client, push, plan.PR(owner, repo, base))
	return url, rateLimited(err)
}

// publishTempPattern names the publisher's temporary clones in $TMPDIR.
const publishTempPattern = "runner-publish-*"

// plan is the pull request of r: the task spec's github.pull_request
// (rendered with the repository's inputs) when it has one, else the
// defaults with the run's report as the body and the publisher's draft flag
// and labels; the files and the task come from the run's event log.
func (p *GitHubPublisher) plan(ctx context.Context, r RepoResult) (github.PRPlan, error) {
	outDir := filepath.Join(p.Dir, r.ID)
	files, err := changedFiles(ctx, outDir)
	if err != nil {
		return github.PRPlan{}, err
	}
	started, err := runStarted(filepath.Join(outDir, outdir.EventsFile))
	if err != nil {
		return github.PRPlan{}, err
	}
	req := github.PRRequest{Task: started.Task, Draft: p.Draft, Labels: p.Labels,
		AuthorName: p.Author, AuthorEmail: p.Email, Files: files,
		Provenance: github.Provenance{Task: started.Task, Model: started.Model, CostUSD: r.CostUSD}}
	if md, err := report.MarkdownFile(ctx, filepath.Join(outDir, outdir.EventsFile), report.MarkdownOptions{HeadingLevel: 2}); err == nil {
		req.Body = md
	}
	if task := taskSpecOf(outDir, started.SpecPath); task != nil {
		data := spec.TemplateData{Inputs: started.Inputs, Event: map[string]any{}, GitHub: map[string]any{}}
		if req.Spec, err = pipeline.PullRequestTexts(task, data); err != nil {
			return github.PRPlan{}, fmt.Errorf("%s: %w", r.ID, err)
		}
	}
	plan, err := github.PlanPullRequest(req)
	if err != nil {
		return github.PRPlan{}, fmt.Errorf("%s: %w", r.ID, err)
	}
	return plan, nil
}

// manifestRef is the ref the manifest gives repository id ("" when none).
func (p *GitHubPublisher) manifestRef(id string) string {
	if m, err := ReadManifest(p.Dir); err == nil {
		for _, mr := range m.Repos {
			if mr.ID == id {
				return mr.Ref
			}
		}
	}
	return ""
}

// baseSources are where the base commit is fetched from: the batch's clone
// cache when it has the repository, then the remote.
func (p *GitHubPublisher) baseSources(id, remote string) []string {
	cache := cmp.Or(p.CacheDir, filepath.Join(p.Dir, ".cache"))
	for _, cached := range []string{cacheEntry(cache, id), filepath.Join(cache, id+".git")} { // an earlier version's last
		if isDir(cached) {
			return []string{cached, remote}
		}
	}
	return []string{remote}
}

// taskSpecOf loads the task spec a repository ran with: out/<id>/task.yaml
// when the executor wrote one, else the spec path its log names; nil when
// neither loads.
func taskSpecOf(outDir, specPath string) *spec.Spec {
	for _, path := range []string{filepath.Join(outDir, TaskFile), specPath} {
		if path == "" {
			continue
		}
		if spec, err := spec.Load(path); err == nil {
			return spec
		}
	}
	return nil
}

// runStarted reads the run.started line of an event log.
func runStarted(path string) (event.RunStarted, error) {
	f, err := os.Open(path)
	if err != nil {
		return event.RunStarted{}, fmt.Errorf("%w: %w", pipeline.ErrInfra, err)
	}
	defer f.Close()
	recs, err := event.ReadLog(f)
	if err != nil {
		return event.RunStarted{}, fmt.Errorf("%w: %s: %w", pipeline.ErrInfra, path, err)
	}
	for _, rec := range recs {
		if rec.Type == (event.RunStarted{}).EventType() {
			var s event.RunStarted
			if err := json.Unmarshal(rec.Raw, &s); err != nil {
				return s, fmt.Errorf("%w: %s:%d: %w", pipeline.ErrInfra, path, rec.Line, err)
			}
			return s, nil
		}
	}
	return event.RunStarted{}, fmt.Errorf("%w: %s has no run.started", pipeline.ErrInfra, path)
}

func (p *GitHubPublisher) remote(owner, repo string) string {
	if p.Remote != nil {
		return p.Remote(owner, repo)
	}
	return github.RepoRemoteURL(p.ServerURL, owner, repo)
}

// rateLimited turns GitHub's primary and secondary rate limit answers into
// a *RetryAfterError, so that Publish waits and tries the same repository
// again.
func rateLimited(err error) error {
	if wait, ok := github.RateLimitWait(err); ok {
		return &RetryAfterError{After: wait, Err: err}
	}
	return err
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// changedFiles returns the files of the run's final patch from
// out/events.jsonl; nil when the run changed nothing.
func changedFiles(ctx context.Context, outDir string) ([]event.FileChange, error) {
	reports, err := report.Load(ctx, filepath.Join(outDir, outdir.EventsFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", pipeline.ErrInfra, err)
	}
	if len(reports) == 0 || reports[len(reports)-1].Diff == nil || !reports[len(reports)-1].Diff.Final {
		return nil, nil
	}
	return reports[len(reports)-1].Diff.Files, nil
}
