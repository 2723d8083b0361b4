package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// hideGitCredentials takes the credentials the workflow left for git out
// of the work tree's git config for the run (actions/checkout's
// extraheader, credential helpers, included credential files), learns
// their values for the redactors, and hides included files from the
// sandbox. restoreGitCredentials puts them back. The runner's own pushes
// authenticate with the token it is given, not through this file.
func (r *execRun) hideGitCredentials(_ context.Context) error {
	if r.gitCreds != nil {
		return nil // taken out already
	}
	path := gitConfigPath(r.workTree)
	if path == "" {
		return nil
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil //nolint:nilerr // no config file: nothing to take out
	}
	original, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: git config: %w", ErrInfra, err)
	}
	f := filterGitConfig(original, filepath.Dir(path), r.getenv("HOME"))
	for _, inc := range f.includes {
		if data, err := os.ReadFile(inc); err == nil {
			sub := filterGitConfig(data, filepath.Dir(inc), r.getenv("HOME"))
			f.secrets = append(f.secrets, sub.secrets...)
		}
	}
	if f.removed.Len() == 0 {
		return nil
	}
	g := &gitCreds{path: path, original: original, filtered: f.out.Bytes(), removed: f.removed.Bytes(),
		mode: fi.Mode().Perm(), secrets: f.secrets, includes: f.includes}
	if err := writeFileAtomic(path, g.filtered, g.mode); err != nil {
		return fmt.Errorf("%w: git config: take the credentials out: %w", ErrInfra, err)
	}
	r.gitCreds = g
	r.redactor.Add(g.secrets...)
	return nil
}

// restoreGitCredentials puts back what hideGitCredentials took out: the
// original file when the run left the filtered one as it was, else the
// removed sections appended to what the run left.
func (r *execRun) restoreGitCredentials() error {
	g := r.gitCreds
	if g == nil {
		return nil
	}
	r.gitCreds = nil
	cur, err := os.ReadFile(g.path)
	content := g.original
	if err == nil && !bytes.Equal(cur, g.filtered) {
		content = append(append(bytes.TrimRight(cur, "\n"), '\n'), g.removed...)
	}
	if err := writeFileAtomic(g.path, content, g.mode); err != nil {
		return fmt.Errorf("git config: put the credentials back in %s: %w", g.path, err)
	}
	return nil
}
