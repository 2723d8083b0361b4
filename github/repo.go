package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gh "github.com/google/go-github/v60/github"
)

// Client is the go-github API client NewClient returns, named here so that
// packages above this one never import go-github themselves.
type Client = gh.Client

// ErrNotOnServer means a repository URL does not name a repository on the
// GitHub server in use, so no pull request can be opened for it.
var ErrNotOnServer = errors.New("not a repository on the GitHub server")

// DefaultRateLimitWait is how long to wait after a rate limit answer that
// says no Retry-After.
const DefaultRateLimitWait = time.Minute

var scpLike = regexp.MustCompile(`^[\w.-]+@([\w.-]+):(.+)$`)

// commitHash is a full hex commit id (a ref that is no branch).
var commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ParseRepoURL splits a repository URL on serverURL's host
// (https://host/owner/repo(.git) or git@host:owner/repo(.git)) into owner
// and repository; any other URL is ErrNotOnServer. serverURL "" is
// DefaultServerURL.
func ParseRepoURL(serverURL, source string) (owner, repo string, err error) {
	server, err := url.Parse(cmp.Or(serverURL, DefaultServerURL))
	if err != nil {
		return "", "", fmt.Errorf("server URL %q: %w", serverURL, err)
	}
	host, path := "", ""
	if m := scpLike.FindStringSubmatch(source); m != nil {
		host, path = m[1], m[2]
	} else if u, err := url.Parse(source); err == nil && u.Host != "" {
		host, path = u.Hostname(), u.Path
	}
	parts := strings.Split(strings.Trim(strings.TrimSuffix(path, ".git"), "/"), "/")
	if host == "" || !strings.EqualFold(host, server.Hostname()) || len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("%s: %w %s", source, ErrNotOnServer, server.Host)
	}
	return parts[0], parts[1], nil
}

// RepoRemoteURL is the HTTPS remote of owner/repo on serverURL ("" is
// DefaultServerURL).
func RepoRemoteURL(serverURL, owner, repo string) string {
	return strings.TrimRight(cmp.Or(serverURL, DefaultServerURL), "/") + "/" + owner + "/" + repo + ".git"
}

// BaseBranch is the base of a pull request into owner/repo: ref when it is
// a branch of the repository, else the repository's default branch.
func BaseBranch(ctx context.Context, client *Client, owner, repo, ref string) (string, error) {
	if ref != "" && !commitHash.MatchString(ref) {
		if _, _, err := client.Repositories.GetBranch(ctx, owner, repo, ref, 0); err == nil {
			return ref, nil
		}
	}
	info, _, err := client.Repositories.Get(ctx, owner, repo)
	if err != nil {
		return "", fmt.Errorf("%s/%s: %w", owner, repo, err)
	}
	return info.GetDefaultBranch(), nil
}

// RateLimitWait reports whether err is a primary or secondary rate limit
// answer and how long to wait before trying again (its Retry-After or
// reset time, else DefaultRateLimitWait).
func RateLimitWait(err error) (time.Duration, bool) {
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &abuse) {
		if abuse.RetryAfter != nil {
			return *abuse.RetryAfter, true
		}
		return DefaultRateLimitWait, true
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		if wait := time.Until(rl.Rate.Reset.Time); wait > 0 {
			return wait, true
		}
		return DefaultRateLimitWait, true
	}
	return 0, false
}

// FetchCommit makes a bare repository at dir (emptied first) that holds
// commit, cloned from the first of sources that has it (a local clone
// cache, then the remote; token authenticates https:// sources).
func FetchCommit(ctx context.Context, dir string, sources []string, commit, token string) error {
	var errs []error
	for _, src := range sources {
		if err := emptyDir(dir); err != nil {
			return err
		}
		opts := &git.CloneOptions{URL: src, Tags: git.NoTags}
		if token != "" && strings.HasPrefix(src, "https://") {
			opts.Auth = &githttp.BasicAuth{Username: "x-access-token", Password: token}
		}
		repo, err := git.PlainCloneContext(ctx, dir, true, opts)
		if err == nil {
			if _, err = repo.CommitObject(plumbing.NewHash(commit)); err == nil {
				return nil
			}
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("fetch base commit %.12s: %w", commit, errors.Join(errs...))
}

// emptyDir removes everything in dir, creating it when absent.
func emptyDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o755)
}

// PublishPullRequest pushes the commit of push (force-with-lease, see
// PushBranch) and opens or updates the pull request pr for its branch: the
// one way both `runner exec` and `runner batch publish` publish. pr.Base is
// required; without it nothing is pushed.
func PublishPullRequest(ctx context.Context, client *Client, push PushOptions, pr PROptions) (url string, number int, created bool, err error) {
	if pr.Base == "" { // checked first: no branch is pushed for a pull request that cannot be opened
		return "", 0, false, fmt.Errorf("github: pull request for %s: no base branch", push.Branch)
	}
	commit, err := PushBranch(ctx, push)
	if err != nil {
		return "", 0, false, err
	}
	if push.Pushed != nil {
		push.Pushed(push.Branch, commit)
	}
	pr.Branch = push.Branch
	return EnsurePullRequest(ctx, client, pr)
}

// HeadCommit is the commit HEAD names in the repository of dir (dir or one
// of its parents holds .git): the base of a run's pull request.
func HeadCommit(dir string) (string, error) {
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
