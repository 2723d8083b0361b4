package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gh "github.com/google/go-github/v60/github"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/report"
)

// ErrNotGitHub means a repository of the batch is not on the GitHub
// server publishing talks to, so no pull request can be opened for it.
var ErrNotGitHub = errors.New("not a repository on the GitHub server")

// DefaultRateLimitWait is how long to wait after a rate limit answer that
// says no Retry-After.
const DefaultRateLimitWait = time.Minute

// GitHubPublisher is the Publisher of `runner batch publish`: for each
// result it rebuilds the patched tree from the repository's out dir (the
// files the executor saved in TreeDir, the file list of events.jsonl) on
// top of the base commit, pushes it as a branch with the token
// (force-with-lease) and opens or updates the pull request. Publish calls it
// serially; it is not safe for concurrent use.
type GitHubPublisher struct {
	Dir       string     // the batch out dir being published
	Client    *gh.Client // API client (github.NewClient)
	ServerURL string     // e.g. https://github.com; repositories must live there
	Token     string     // pushes over HTTPS as x-access-token
	// Remote returns the URL to fetch from and push to for owner/repo;
	// nil means ServerURL/owner/repo.git. Tests point it at local
	// repositories.
	Remote func(owner, repo string) string
	// CacheDir is a clone cache of `batch run` (CacheDir/<id>.git) to
	// read the base commit from before fetching it; "" = Dir/.cache.
	CacheDir string
	Author   string // commit author name; "" = "runner"
	Email    string // commit author email; "" = "runner@users.noreply.github.com"
	// Draft and Labels apply to pull requests whose task spec says
	// nothing of its own.
	Draft  bool
	Labels []string
}

// prPlan is what one pull request needs.
type prPlan struct {
	owner, repo string
	remote      string
	branch      string
	base        string
	title, body string
	draft       bool
	labels      []string
	prov        github.Provenance
	files       []event.FileChange
}

// Publish pushes r's patch as a branch and opens or updates its pull
// request; a rate limit answer is a *RetryAfterError.
func (p *GitHubPublisher) Publish(ctx context.Context, r RepoResult, _ string) (string, error) {
	plan, err := p.plan(ctx, r)
	if err != nil {
		return "", err
	}
	clone, err := os.MkdirTemp("", "runner-publish-")
	if err != nil {
		return "", fmt.Errorf("%w: %w", pipeline.ErrInfra, err)
	}
	defer os.RemoveAll(clone)
	if err := p.fetchBase(ctx, r, plan.remote, clone); err != nil {
		return "", err
	}
	var paths []string
	for _, f := range plan.files {
		paths = append(paths, f.Path)
		if f.OldPath != "" {
			paths = append(paths, f.OldPath)
		}
	}
	_, err = github.PushBranch(ctx, github.PushOptions{
		RepoDir: clone, BaseCommit: r.Commit,
		WorkTree: filepath.Join(p.Dir, r.ID, TreeDir), Paths: paths,
		Branch: plan.branch, RemoteURL: plan.remote, Token: p.Token,
		AuthorName: firstSet(p.Author, "runner"), AuthorEmail: firstSet(p.Email, "runner@users.noreply.github.com"),
		Message: plan.title,
	})
	if err != nil {
		return "", err
	}
	url, _, _, err := github.EnsurePullRequest(ctx, p.Client, github.PROptions{
		Owner: plan.owner, Repo: plan.repo, Branch: plan.branch, Base: plan.base,
		Title: plan.title, Body: plan.body, Draft: plan.draft, Labels: plan.labels, Provenance: plan.prov,
	})
	return url, rateLimited(err)
}

// plan collects the pull request's repository, branch, texts and files.
func (p *GitHubPublisher) plan(ctx context.Context, r RepoResult) (*prPlan, error) {
	owner, repo, err := p.ownerRepo(r.Repo)
	if err != nil {
		return nil, err
	}
	if r.Commit == "" {
		return nil, fmt.Errorf("%s: the result records no base commit", r.ID)
	}
	outDir := filepath.Join(p.Dir, r.ID)
	files, err := changedFiles(ctx, outDir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: %w", r.ID, github.ErrNoChanges)
	}
	started, err := runStarted(filepath.Join(outDir, report.EventsFile))
	if err != nil {
		return nil, err
	}
	plan := &prPlan{owner: owner, repo: repo, remote: p.remote(owner, repo), files: files,
		draft: p.Draft, labels: p.Labels,
		prov: github.Provenance{Task: started.Task, Model: started.Model, CostUSD: &r.CostUSD}}
	if err := p.texts(ctx, plan, r, started, outDir); err != nil {
		return nil, err
	}
	if plan.base, err = p.baseBranch(ctx, r, owner, repo); err != nil {
		return nil, rateLimited(err)
	}
	return plan, nil
}

// texts fills the branch, title and body: from the task spec's
// github.pull_request templates (with the run's inputs) when it has one,
// else a branch per task and the run's report.
func (p *GitHubPublisher) texts(ctx context.Context, plan *prPlan, r RepoResult, s event.RunStarted, outDir string) error {
	plan.branch = "runner/" + s.Task
	plan.title = "runner: " + s.Task
	if md, err := report.MarkdownFile(ctx, filepath.Join(outDir, report.EventsFile), report.MarkdownOptions{HeadingLevel: 2}); err == nil {
		plan.body = md
	}
	task := taskSpecOf(outDir, s.SpecPath)
	if task == nil || task.GitHub.PullRequest == nil {
		return nil
	}
	pr := task.GitHub.PullRequest
	data := spec.TemplateData{Inputs: s.Inputs, Event: map[string]any{}, GitHub: map[string]any{}}
	var err error
	if plan.branch, err = task.RenderTemplate("github.pull_request.branch", pr.Branch, data); err != nil {
		return fmt.Errorf("%s: %w", r.ID, err)
	}
	if plan.title, err = task.RenderTemplate("github.pull_request.title", pr.Title, data); err != nil {
		return fmt.Errorf("%s: %w", r.ID, err)
	}
	if pr.Body != "" {
		if plan.body, err = task.RenderTemplate("github.pull_request.body", pr.Body, data); err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
	}
	plan.draft, plan.labels = pr.Draft, pr.Labels
	return nil
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

// baseBranch is the pull request's base: the manifest's ref when it is a
// branch of the repository, else its default branch.
func (p *GitHubPublisher) baseBranch(ctx context.Context, r RepoResult, owner, repo string) (string, error) {
	if m, err := ReadManifest(p.Dir); err == nil {
		for _, mr := range m.Repos {
			if mr.ID == r.ID && mr.Ref != "" && !hexCommit.MatchString(mr.Ref) {
				if _, _, err := p.Client.Repositories.GetBranch(ctx, owner, repo, mr.Ref, 0); err == nil {
					return mr.Ref, nil
				}
			}
		}
	}
	info, _, err := p.Client.Repositories.Get(ctx, owner, repo)
	if err != nil {
		return "", fmt.Errorf("%s/%s: %w", owner, repo, err)
	}
	return info.GetDefaultBranch(), nil
}

// fetchBase makes a bare repository at dir that holds r.Commit: cloned
// from the batch's clone cache when it has the repository, else from
// remote (with the token).
func (p *GitHubPublisher) fetchBase(ctx context.Context, r RepoResult, remote, dir string) error {
	cache := p.CacheDir
	if cache == "" {
		cache = filepath.Join(p.Dir, ".cache")
	}
	sources := []string{remote}
	if cached := filepath.Join(cache, r.ID+".git"); isDir(cached) {
		sources = []string{cached, remote}
	}
	var errs []error
	for _, src := range sources {
		if err := clearDir(dir); err != nil {
			return err
		}
		opts := &git.CloneOptions{URL: src, Tags: git.NoTags}
		if p.Token != "" && strings.HasPrefix(src, "https://") {
			opts.Auth = &githttp.BasicAuth{Username: "x-access-token", Password: p.Token}
		}
		repo, err := git.PlainCloneContext(ctx, dir, true, opts)
		if err == nil {
			if _, err = repo.CommitObject(plumbing.NewHash(r.Commit)); err == nil {
				return nil
			}
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("%w: fetch base commit %s of %s: %w", pipeline.ErrInfra, shortHash(r.Commit), r.ID, errors.Join(errs...))
}

var scpLike = regexp.MustCompile(`^[\w.-]+@([\w.-]+):(.+)$`)

// ownerRepo parses a repository URL on ServerURL's host:
// https://host/owner/repo(.git) or git@host:owner/repo(.git).
func (p *GitHubPublisher) ownerRepo(source string) (string, string, error) {
	server, err := url.Parse(firstSet(p.ServerURL, github.DefaultServerURL))
	if err != nil {
		return "", "", fmt.Errorf("%w: server URL: %w", pipeline.ErrUsage, err)
	}
	host, path := "", ""
	if m := scpLike.FindStringSubmatch(source); m != nil {
		host, path = m[1], m[2]
	} else if u, err := url.Parse(source); err == nil && u.Host != "" {
		host, path = u.Hostname(), u.Path
	}
	parts := strings.Split(strings.Trim(strings.TrimSuffix(path, ".git"), "/"), "/")
	if host == "" || !strings.EqualFold(host, server.Hostname()) || len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("%s: %w %s", source, ErrNotGitHub, server.Host)
	}
	return parts[0], parts[1], nil
}

func (p *GitHubPublisher) remote(owner, repo string) string {
	if p.Remote != nil {
		return p.Remote(owner, repo)
	}
	return strings.TrimRight(firstSet(p.ServerURL, github.DefaultServerURL), "/") + "/" + owner + "/" + repo + ".git"
}

// rateLimited turns GitHub's primary and secondary rate limit answers into
// a *RetryAfterError, so that Publish waits and tries the same repository
// again.
func rateLimited(err error) error {
	if err == nil {
		return nil
	}
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &abuse) {
		wait := DefaultRateLimitWait
		if abuse.RetryAfter != nil {
			wait = *abuse.RetryAfter
		}
		return &RetryAfterError{After: wait, Err: err}
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		wait := time.Until(rl.Rate.Reset.Time)
		if wait <= 0 {
			wait = DefaultRateLimitWait
		}
		return &RetryAfterError{After: wait, Err: err}
	}
	return err
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// changedFiles returns the files of the run's final patch from
// out/events.jsonl; nil when the run changed nothing.
func changedFiles(ctx context.Context, outDir string) ([]event.FileChange, error) {
	reports, err := report.Load(ctx, filepath.Join(outDir, report.EventsFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", pipeline.ErrInfra, err)
	}
	if len(reports) == 0 || reports[len(reports)-1].Diff == nil || !reports[len(reports)-1].Diff.Final {
		return nil, nil
	}
	return reports[len(reports)-1].Diff.Files, nil
}
