package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// PushOptions say what PushBranch commits and where it pushes.
type PushOptions struct {
	// RepoDir is the local repository (its work tree or .git directory)
	// holding BaseCommit; the new objects are written into it, no ref is.
	RepoDir string
	// BaseCommit is the commit the branch starts from (the run's base).
	BaseCommit string
	// Tree is the hash of the final tree when it is already in RepoDir's
	// objects. Otherwise WorkTree and Paths give it: the base tree with each
	// path (repository-relative, slash-separated: the files of the patch,
	// both sides of a rename) taken from WorkTree, or removed when absent.
	Tree     string
	WorkTree string
	Paths    []string
	// Branch is the branch name on the remote, without refs/heads/.
	Branch string
	// Pushed, when set, is called with the branch and the commit pushed
	// (PublishPullRequest's callers record them).
	Pushed func(branch, commit string)
	// Expect, when set, is the commit the remote branch must hold for the
	// push to go through (the pull request head a run checked out);
	// otherwise the branch's value when PushBranch reads it is the lease.
	Expect string
	// RemoteURL is where to push (https://host/owner/repo.git; a local path
	// in tests). Token authenticates HTTPS as x-access-token.
	RemoteURL string
	Token     string
	// AuthorName, AuthorEmail and Message make the commit; Time is its date
	// (zero: now).
	AuthorName, AuthorEmail string
	Message                 string
	Time                    time.Time
}

// pushRemoteName names the in-memory remote used for a push.
const pushRemoteName = "runner-push"

// PushBranch commits the patched tree on top of BaseCommit and pushes it to
// Branch with force-with-lease semantics: it first reads the branch's
// current value on the remote, then pushes a forced update that the remote
// accepts only while the branch still has that value (absent stays a plain
// create). A branch that moved meanwhile fails with ErrLease; nothing of
// ours is overwritten silently. A tree equal to the base is ErrNoChanges.
// It returns the new commit's hash.
//
// go-git's PushOptions.ForceWithLease (v5.19.3) resolves the local
// remote-tracking ref even when a hash is given, failing when there is none,
// and cannot express "the branch must not exist"; RequireRemoteRefs checks
// the value the remote advertises in the push session itself, so it is used
// instead.
func PushBranch(ctx context.Context, o PushOptions) (string, error) {
	if err := ValidateBranch(o.Branch); err != nil {
		return "", err
	}
	repo, err := git.PlainOpenWithOptions(o.RepoDir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return "", fmt.Errorf("%w: open %s: %w", ErrPush, o.RepoDir, err)
	}
	commit, err := commitPatch(repo, o)
	if err != nil {
		return "", err
	}
	remote := git.NewRemote(repo.Storer, &config.RemoteConfig{Name: pushRemoteName, URLs: []string{o.RemoteURL}})
	auth := pushAuth(o.RemoteURL, o.Token)
	old := plumbing.NewHash(o.Expect)
	if o.Expect == "" {
		if old, err = remoteBranch(ctx, remote, auth, o.Branch); err != nil {
			return "", err
		}
	}
	if err := pushCommit(ctx, remote, auth, commit, o.Branch, old); err != nil {
		return "", fmt.Errorf("%s to %s: %w", o.Branch, redactURL(o.RemoteURL), err)
	}
	return commit.String(), nil
}

// pushCommit sets the remote branch to commit provided it still holds lease
// (zero: provided it does not exist).
func pushCommit(ctx context.Context, remote *git.Remote, auth transport.AuthMethod, commit plumbing.Hash, branch string, lease plumbing.Hash) error {
	dst := plumbing.NewBranchReferenceName(branch)
	po := &git.PushOptions{RemoteName: pushRemoteName, Auth: auth}
	if lease.IsZero() {
		po.RefSpecs = []config.RefSpec{config.RefSpec(commit.String() + ":" + dst.String())}
	} else {
		po.RefSpecs = []config.RefSpec{config.RefSpec("+" + commit.String() + ":" + dst.String())}
		po.RequireRemoteRefs = []config.RefSpec{config.RefSpec(lease.String() + ":" + dst.String())}
	}
	err := remote.PushContext(ctx, po)
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
		return nil
	case isLeaseError(err):
		return fmt.Errorf("%w: %w", ErrLease, err)
	default:
		return withPermissionHint(callPush, fmt.Errorf("%w: %w", ErrPush, err))
	}
}

// commitPatch writes the tree and the commit object.
func commitPatch(repo *git.Repository, o PushOptions) (plumbing.Hash, error) {
	base, err := repo.CommitObject(plumbing.NewHash(o.BaseCommit))
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: base commit %q: %w", ErrPush, o.BaseCommit, err)
	}
	var tree plumbing.Hash
	switch {
	case o.Tree != "":
		tree = plumbing.NewHash(o.Tree)
		if _, err := repo.TreeObject(tree); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("%w: tree %s: %w", ErrPush, o.Tree, err)
		}
	case o.WorkTree != "":
		baseTree, err := base.Tree()
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("%w: base tree: %w", ErrPush, err)
		}
		if tree, err = patchTree(repo.Storer, baseTree, o.WorkTree, o.Paths); err != nil {
			return plumbing.ZeroHash, err
		}
	default:
		return plumbing.ZeroHash, fmt.Errorf("%w: neither Tree nor WorkTree given", ErrPush)
	}
	if tree == base.TreeHash {
		return plumbing.ZeroHash, fmt.Errorf("%w: the tree equals the base commit's", ErrNoChanges)
	}
	when := o.Time
	if when.IsZero() {
		when = time.Now()
	}
	sig := object.Signature{Name: cmp.Or(o.AuthorName, DefaultAuthorName), Email: cmp.Or(o.AuthorEmail, DefaultAuthorEmail), When: when}
	c := &object.Commit{Author: sig, Committer: sig, Message: o.Message, TreeHash: tree, ParentHashes: []plumbing.Hash{base.Hash}}
	obj := repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: encode commit: %w", ErrPush, err)
	}
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: store commit: %w", ErrPush, err)
	}
	return h, nil
}

// remoteBranch reads the branch's value on the remote (zero when absent).
func remoteBranch(ctx context.Context, remote *git.Remote, auth transport.AuthMethod, branch string) (plumbing.Hash, error) {
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: list remote refs: %w", ErrPush, err)
	}
	name := plumbing.NewBranchReferenceName(branch)
	for _, r := range refs {
		if r.Name() == name && r.Type() == plumbing.HashReference {
			return r.Hash(), nil
		}
	}
	return plumbing.ZeroHash, nil
}

// pushAuth is HTTP basic auth with the token for http(s) remotes, the form
// GitHub accepts for GITHUB_TOKEN and app tokens; other transports get none.
func pushAuth(remoteURL, token string) transport.AuthMethod {
	if token == "" || !(strings.HasPrefix(remoteURL, "https://") || strings.HasPrefix(remoteURL, "http://")) {
		return nil
	}
	return &githttp.BasicAuth{Username: "x-access-token", Password: token}
}

func isLeaseError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "required to be") || strings.Contains(s, "non-fast-forward") ||
		errors.Is(err, git.ErrForceNeeded) || errors.Is(err, plumbing.ErrObjectNotFound)
}

// redactURL drops credentials from a URL for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}

// ValidateBranch checks a branch name against git's ref rules.
func ValidateBranch(name string) error {
	if name == "" || strings.HasPrefix(name, "-") || strings.HasPrefix(name, "refs/") {
		return fmt.Errorf("%w: %q", ErrBranchName, name)
	}
	if err := plumbing.NewBranchReferenceName(name).Validate(); err != nil {
		return fmt.Errorf("%w: %q: %w", ErrBranchName, name, err)
	}
	return nil
}
