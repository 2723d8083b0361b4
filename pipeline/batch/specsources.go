package batch

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// CheckSources checks that every local repository of s can be cloned:
// a "path" entry (or a repos_file line naming a path) and a file:// URL
// must name an existing directory that holds a git repository (a work
// tree or a bare repository). LoadSpec checks the spec's structure only
// (a batch file can be validated before its repositories are made);
// `runner validate` and Run call CheckSources too, so a missing
// repository is a spec error at its position (exit 2) before anything
// runs, not a clone that fails at run time and is retried as an
// infrastructure failure. Remote URLs are not contacted. The error is a
// SpecErrors (matching ErrInvalidSpec) with one entry per bad repository.
func CheckSources(s *Spec) error {
	var errs SpecErrors
	for _, r := range s.Repos {
		if e := checkSource(s.Dir, r); e != nil {
			errs = append(errs, e)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// checkSource returns the problem of one repository entry, nil when it is
// fine or not local.
func checkSource(dir string, r RepoSpec) *SpecError {
	what, p, hint := "path", "", "the path is relative to the batch file: fix it, or make a git repository there"
	switch {
	case r.Path != "":
		p = resolve(dir, r.Path)
	case strings.HasPrefix(strings.ToLower(r.URL), "file://"):
		u, err := url.Parse(r.URL)
		if err != nil {
			return nil // the clone reports a URL it cannot parse
		}
		what, p, hint = "url", u.Path, "a file:// URL names an absolute path: fix it, or make a git repository there"
	default:
		return nil
	}
	e := posError(r.Pos)
	named := r.Path
	if named == "" {
		named = r.URL
	}
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		e.Msg = fmt.Sprintf("%s: local repository %q does not exist (looked for %s)", what, named, p)
	case err != nil:
		e.Msg = fmt.Sprintf("%s: local repository %q cannot be read: %v", what, named, err)
	case !st.IsDir():
		e.Msg = fmt.Sprintf("%s: local repository %q is not a directory (%s)", what, named, p)
	default:
		msg, h := checkRepo(p, r.Ref)
		if msg == "" {
			return nil
		}
		e.Msg = fmt.Sprintf("%s: local repository %q %s", what, named, msg)
		hint = h
	}
	e.Hint = hint
	return e
}

// checkRepo opens the git repository at p and looks ref up in it as the
// clone will (cloner.clone: a full commit hash, else a branch, else a
// tag; HEAD when ref is ""). It returns what is wrong and a hint,
// or "" when the clone can go ahead.
func checkRepo(p, ref string) (msg, hint string) {
	repo, err := git.PlainOpen(p)
	switch {
	case errors.Is(err, git.ErrRepositoryNotExists):
		return fmt.Sprintf("is not a git repository (%s)", p), "run git init and commit there, or name the repository's top directory"
	case err != nil:
		return fmt.Sprintf("cannot be opened (%s): %v", p, err), "check the repository with git status there"
	}
	if ref == "" {
		if _, err := repo.Head(); err != nil {
			return fmt.Sprintf("has no commit on HEAD (%s): %v", p, err), "commit there first, or give a ref"
		}
		return "", ""
	}
	if hexCommit.MatchString(ref) {
		if _, err := repo.CommitObject(plumbing.NewHash(ref)); err == nil {
			return "", ""
		}
	}
	for _, name := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref)} {
		if _, err := repo.Reference(name, true); err == nil {
			return "", ""
		}
	}
	return fmt.Sprintf("has no branch, tag or commit %q (%s)", ref, p), "fix the ref (a branch, a tag or a full commit hash), or leave it out for the repository's HEAD"
}

// posError makes a SpecError at pos ("file:line:col", as RepoSpec.Pos).
func posError(pos string) *SpecError {
	e := &SpecError{File: pos, Line: 1, Col: 1}
	rest, col, ok := cutLastNumber(pos)
	if !ok {
		return e
	}
	file, line, ok := cutLastNumber(rest)
	if !ok {
		return e
	}
	e.File, e.Line, e.Col = file, line, col
	return e
}

// cutLastNumber splits "x:N" into "x" and N.
func cutLastNumber(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return s, 0, false
	}
	return s[:i], n, true
}
