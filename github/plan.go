package github

import (
	"cmp"

	"github.com/seed43ef5acb/runner/runner/event"
)

// Commit authors of pull request branches: a run in GitHub Actions commits
// as the workflow token's bot, `runner batch publish` as runner unless told
// otherwise.
const (
	DefaultAuthorName  = "runner"
	DefaultAuthorEmail = "runner@users.noreply.github.com"
	ActionsAuthorName  = "github-actions[bot]"
	ActionsAuthorEmail = "41898282+github-actions[bot]@users.noreply.github.com"
)

// PRTexts is a task's github.pull_request block with its templates
// rendered (pipeline/spec renders them; this package knows no templates
// of the spec).
type PRTexts struct {
	Branch, Title, Body string // Body "" = the request's fallback body
	Draft               bool
	Labels              []string
}

// PRRequest is what a run asks for when it wants a pull request, in
// `runner exec` (GitHub Actions) and in `runner batch publish` alike.
type PRRequest struct {
	Task string   // the task's name: the default branch and title
	Spec *PRTexts // the task's pull_request block; nil when it has none
	// BranchData fills DefaultBranchTemplate when Spec is nil (its Task is
	// set from Task).
	BranchData BranchData
	// Body is the body when Spec gives none (the final message, the report).
	Body string
	// Draft and Labels apply when Spec is nil.
	Draft  bool
	Labels []string
	// AuthorName and AuthorEmail make the commit; "" = DefaultAuthorName
	// and DefaultAuthorEmail.
	AuthorName, AuthorEmail string
	// Files are the files of the run's final patch.
	Files      []event.FileChange
	Provenance Provenance
}

// PRPlan is one pull request to make: the branch commit (the base commit
// with Paths taken from a work tree) and the pull request for it.
type PRPlan struct {
	Branch, Title, Body     string
	Draft                   bool
	Labels                  []string
	AuthorName, AuthorEmail string
	Paths                   []string // repository-relative, both sides of renames
	Provenance              Provenance
}

// PlanPullRequest is the one place the pull request of a run is planned:
// the task's pull_request block when it has one, else the branch of
// DefaultBranchTemplate (runner/<task>/<run id> when that name is not a
// valid ref), the title "runner: <task>" and the request's body, draft flag
// and labels. A run that changed nothing is ErrNoChanges.
func PlanPullRequest(req PRRequest) (PRPlan, error) {
	paths := ChangedPaths(req.Files)
	if len(paths) == 0 {
		return PRPlan{}, ErrNoChanges
	}
	p := PRPlan{
		Title: "runner: " + req.Task, Body: req.Body, Draft: req.Draft, Labels: req.Labels,
		AuthorName: cmp.Or(req.AuthorName, DefaultAuthorName), AuthorEmail: cmp.Or(req.AuthorEmail, DefaultAuthorEmail),
		Paths: paths, Provenance: req.Provenance,
	}
	if s := req.Spec; s != nil {
		p.Branch, p.Title, p.Body = s.Branch, s.Title, cmp.Or(s.Body, req.Body)
		p.Draft, p.Labels = s.Draft, s.Labels
		return p, nil
	}
	d := req.BranchData
	d.Task = req.Task
	branch, err := BranchName(DefaultBranchTemplate, d)
	if err != nil {
		branch = "runner/" + req.Task + "/" + d.RunID
	}
	p.Branch = branch
	return p, nil
}

// Push are the options of PushBranch for the plan: the commit on
// baseCommit of repoDir with the plan's paths taken from workTree.
func (p PRPlan) Push(repoDir, baseCommit, workTree string) PushOptions {
	return PushOptions{RepoDir: repoDir, BaseCommit: baseCommit, WorkTree: workTree, Paths: p.Paths,
		Branch: p.Branch, AuthorName: p.AuthorName, AuthorEmail: p.AuthorEmail, Message: p.Title}
}

// PR are the options of EnsurePullRequest for the plan, into base of
// owner/repo.
func (p PRPlan) PR(owner, repo, base string) PROptions {
	return PROptions{Owner: owner, Repo: repo, Branch: p.Branch, Base: base, Title: p.Title, Body: p.Body,
		Draft: p.Draft, Labels: p.Labels, Provenance: p.Provenance}
}

// ChangedPaths are the paths a patch touches: each file, and the old path
// of a rename.
func ChangedPaths(files []event.FileChange) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
		if f.OldPath != "" {
			out = append(out, f.OldPath)
		}
	}
	return out
}
