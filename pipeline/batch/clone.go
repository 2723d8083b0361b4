package batch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/seed43ef5acb/runner/internal/copytree"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/internal/tempdir"
)

// commitFile records, inside a cached clone, the commit its last clone or
// refresh resolved the entry's ref to; it marks a complete entry, and a
// refresh that fails names it (see refresh).
const commitFile = "RUNNER_BASE_COMMIT"

var hexCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// clonesDir is the clone cache's subdirectory holding the entries
// (<cache>/clones/<id>.git) and their temporary clones: one directory,
// so that a repository's sandbox hides all of them as one thing.
const clonesDir = "clones"

// cacheEntry is the clone cache entry of repository id in cacheDir. An
// entry an earlier version left at <cache>/<id>.git is moved there on
// first use (cloner.cached).
func cacheEntry(cacheDir, id string) string {
	return filepath.Join(cacheDir, clonesDir, id+".git")
}

// cloner keeps one bare, shallow clone per repository in dir and hands
// out fresh work trees copied from it, so the cache is never written to by
// a run. An entry found in the cache is refreshed (fetched) the first time
// this cloner uses it, so every batch invocation runs on the repositories'
// current commits; later attempts of the same invocation (retries) reuse
// the commit resolved then. Processes sharing dir (shards, other batches)
// take the entry's lock file: exclusive to clone or fetch, shared to copy.
type cloner struct {
	dir   string // the cache's clones directory (<cache>/clones)
	depth int    // 0 = full history
	// token authenticates clones from server (see auth); "" = anonymous.
	token  string
	server string // the GitHub server URL; "" = github.DefaultServerURL

	mu   sync.Mutex
	used map[string]string // entry path → the commit this cloner resolved it to
}

// auth returns the credentials for cloning src: the token as basic auth
// x-access-token:TOKEN (what GitHub expects of an installation or Actions
// token) when src is on the GitHub server, that is has the server URL's
// scheme (https for github.com) and host, and carries no credentials of
// its own. Anything else (local paths, file://, ssh, other hosts) is
// cloned without the token, so it never leaks to a third party.
func (c *cloner) auth(src string) transport.AuthMethod {
	if c.token == "" {
		return nil
	}
	server, err := url.Parse(cmp.Or(c.server, github.DefaultServerURL))
	if err != nil || server.Host == "" {
		return nil
	}
	u, err := url.Parse(src)
	if err != nil || u.User != nil || !strings.EqualFold(u.Scheme, server.Scheme) || !strings.EqualFold(u.Host, server.Host) {
		return nil
	}
	return &githttp.BasicAuth{Username: "x-access-token", Password: c.token}
}

// source splits the credentials off an http(s) src
// (http://user:pass@host/…, https://TOKEN@host/…): it returns the URL
// without them, which is all the cached clone's config records, and them
// as basic auth; other sources get auth's answer.
func (c *cloner) source(src string) (string, transport.AuthMethod) {
	u, err := url.Parse(src)
	if err != nil || u.User == nil || !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") {
		return src, c.auth(src)
	}
	pass, _ := u.User.Password()
	auth := &githttp.BasicAuth{Username: u.User.Username(), Password: pass}
	u.User = nil
	return u.String(), auth
}

// linkCachedObjects hard-links the cache's objects into work trees instead
// of copying them. Off: where .git is writable to commands (Landlock only,
// mode off) a write to a linked file is a write to the cache every later
// job of the repository starts from. Tests turn it on as the attack's
// control.
var linkCachedObjects = false

// workTree makes a fresh work tree of repo at dst (which must not exist)
// and returns the base commit. src is the clone URL or absolute path.
func (c *cloner) workTree(ctx context.Context, repo Repo, src, dst string) (string, error) {
	cache, commit, err := c.cached(ctx, repo, src)
	if err != nil {
		return "", err
	}
	unlock, err := lockEntry(ctx, cache, false) // no refresh while copying
	if err != nil {
		return "", err
	}
	var opts copytree.Options
	if linkCachedObjects {
		opts.LinkDir = "objects"
	}
	err = copytree.Copy(ctx, cache, filepath.Join(dst, ".git"), opts)
	unlock()
	if err != nil {
		return "", fmt.Errorf("copy cached clone: %w", err)
	}
	if err := checkout(dst, commit); err != nil {
		return "", fmt.Errorf("check out %s: %w", shortHash(commit), err)
	}
	return commit, nil
}

// cached returns the cache path and base commit of repo: the commit this
// cloner resolved before, else that of a fresh clone or, for an entry
// already cached, of a refresh from src. It holds the entry's lock
// exclusively meanwhile. The clone goes to a temporary directory renamed
// into place, so a killed batch never leaves a half clone in the cache.
func (c *cloner) cached(ctx context.Context, repo Repo, src string) (string, string, error) {
	path := filepath.Join(c.dir, repo.ID+".git")
	if commit, ok := c.resolved(path); ok {
		return path, commit, nil
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return "", "", fmt.Errorf("create cache dir: %w", err)
	}
	unlock, err := lockEntry(ctx, path, true)
	if err != nil {
		return "", "", err
	}
	defer unlock()
	if commit, ok := c.resolved(path); ok { // another attempt did it while we waited
		return path, commit, nil
	}
	c.adoptLegacy(repo.ID, path)
	var commit string
	if prev, err := os.ReadFile(filepath.Join(path, commitFile)); err == nil {
		commit, err = c.refresh(ctx, path, src, repo.Ref, strings.TrimSpace(string(prev)))
		if err != nil {
			return "", "", err
		}
	} else if commit, err = c.fill(ctx, repo, src, path); err != nil {
		return "", "", err
	}
	c.mu.Lock()
	if c.used == nil {
		c.used = map[string]string{}
	}
	c.used[path] = commit
	c.mu.Unlock()
	return path, commit, nil
}

// adoptLegacy moves the entry an earlier version kept at <cache>/<id>.git
// to path, when path has none, so an upgrade refreshes the clone rather
// than cloning again. Called under path's exclusive lock; a failure only
// means a fresh clone.
func (c *cloner) adoptLegacy(id, path string) {
	legacy := filepath.Join(filepath.Dir(c.dir), id+".git")
	if _, err := os.Stat(filepath.Join(legacy, commitFile)); err != nil {
		return
	}
	if _, err := os.Lstat(path); err == nil {
		return
	}
	if os.Rename(legacy, path) == nil {
		_ = os.Remove(legacy + ".lock")
	}
}

// resolved returns the commit this cloner resolved the entry at path to.
func (c *cloner) resolved(path string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	commit, ok := c.used[path]
	return commit, ok
}

// fill clones repo from src into the cache entry path (which is not a
// complete entry), under the entry's exclusive lock.
func (c *cloner) fill(ctx context.Context, repo Repo, src, path string) (string, error) {
	// Cloned inside a locked directory (a killed batch's is collected when
	// the next starts), then renamed into place.
	dir, err := tempdir.New(c.dir, ".clone-"+repo.ID+"-")
	if err != nil {
		return "", fmt.Errorf("create clone dir: %w", err)
	}
	defer func() { _ = dir.Remove() }() // a leftover is collected by a later start
	tmp := filepath.Join(dir.Path(), "git")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", fmt.Errorf("create clone dir: %w", err)
	}
	commit, err := c.clone(ctx, tmp, src, repo.Ref)
	if err != nil {
		return "", fmt.Errorf("clone %s: %w", src, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, commitFile), []byte(commit+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("record base commit: %w", err)
	}
	if err := os.RemoveAll(path); err != nil { // an incomplete entry
		return "", fmt.Errorf("clear stale cache: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("move clone into cache: %w", err)
	}
	return commit, nil
}

// clone makes a bare clone of src at ref into dir and returns the commit
// to run on. A branch or tag is fetched alone and shallow; a full commit
// hash needs the history, so it is fetched without depth.
func (c *cloner) clone(ctx context.Context, dir, src, ref string) (string, error) {
	src, auth := c.source(src)
	opts := &git.CloneOptions{URL: src, Depth: c.depth, SingleBranch: true, Tags: git.NoTags, Auth: auth}
	if ref == "" || hexCommit.MatchString(ref) {
		if ref != "" {
			opts.Depth, opts.SingleBranch = 0, false
		}
		r, err := git.PlainCloneContext(ctx, dir, true, opts)
		if err != nil {
			return "", err
		}
		return resolveCommit(r, ref)
	}
	var errs []error
	for _, name := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref)} {
		opts.ReferenceName = name
		r, err := git.PlainCloneContext(ctx, dir, true, opts)
		if err == nil {
			return resolveCommit(r, "")
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
		if err := clearDir(dir); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("ref %q: %w", ref, errors.Join(errs...))
}

func resolveCommit(r *git.Repository, hash string) (string, error) {
	if hash != "" {
		if _, err := r.CommitObject(plumbing.NewHash(hash)); err != nil {
			return "", fmt.Errorf("commit %s: %w", hash, err)
		}
		return hash, nil
	}
	head, err := r.Head()
	if err != nil {
		return "", fmt.Errorf("resolve HEAD: %w", err)
	}
	return peel(r, head.Hash())
}

// peel returns the commit h names: h itself, or the commit of the
// annotated tag h.
func peel(r *git.Repository, h plumbing.Hash) (string, error) {
	if tag, err := r.TagObject(h); err == nil { // an annotated tag: peel it
		c, err := tag.Commit()
		if err != nil {
			return "", fmt.Errorf("tag %s: %w", tag.Name, err)
		}
		return c.Hash.String(), nil
	}
	if _, err := r.CommitObject(h); err != nil {
		return "", fmt.Errorf("commit %s: %w", shortHash(h.String()), err)
	}
	return h.String(), nil
}

// checkout turns dir (whose .git is a copy of a bare clone) into a work
// tree at commit.
func checkout(dir, commit string) error {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return err
	}
	cfg, err := r.Config()
	if err != nil {
		return err
	}
	cfg.Core.IsBare = false
	if err := r.SetConfig(cfg); err != nil {
		return err
	}
	wt, err := r.Worktree()
	if err != nil {
		return err
	}
	return wt.Reset(&git.ResetOptions{Commit: plumbing.NewHash(commit), Mode: git.HardReset})
}

func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("clear %s: %w", dir, err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("clear %s: %w", dir, err)
		}
	}
	return nil
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
