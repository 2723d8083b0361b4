package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
)

// dotGit is the work tree's own .git entry when it is no git directory:
// a gitfile (a linked worktree's "gitdir: …"), or nothing (a work tree
// below its repository's root, or in none). The user's next git command
// in the work tree finds its repository through this entry. A command
// that points the gitfile at a repository of its own, or makes a .git
// there, has that git run the program its core.fsmonitor names.
type dotGit struct {
	armed bool   // recorded: the entry was a gitfile or missing
	data  []byte // the gitfile's bytes; nil: there was no .git
}

// armDotGit records the work tree's .git when it is a regular file or
// missing (a directory is watched file by file; a link is the user's).
func (t *Tripwire) armDotGit() {
	fi, err := t.root.Lstat(".git")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		t.top = dotGit{armed: true}
	case err == nil && fi.Mode.IsRegular():
		if data, err := t.root.ReadFile(".git", tripwireMaxFile); err == nil {
			t.top = dotGit{armed: true, data: data}
		}
	}
}

// restoreDotGit puts the recorded .git back: whatever a command put
// there is removed whole (a directory with its config), and a gitfile
// written again. It returns [".git"] when it changed, else nil.
func (t *Tripwire) restoreDotGit() []string {
	if !t.top.armed || t.dotGitUnchanged() {
		return nil
	}
	if err := t.root.Remove(".git"); err != nil {
		t.lost = append(t.lost, fmt.Sprintf(".git (%v)", err))
		return []string{".git"}
	}
	if t.top.data != nil {
		if err := t.root.WriteFile(".git", t.top.data, 0o644); err != nil {
			t.lost = append(t.lost, fmt.Sprintf(".git (%v)", err))
		}
	}
	return []string{".git"}
}

// dotGitUnchanged reports the work tree's .git as it was recorded.
func (t *Tripwire) dotGitUnchanged() bool {
	fi, err := t.root.Lstat(".git")
	if t.top.data == nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if err != nil || !fi.Mode.IsRegular() {
		return false
	}
	data, err := t.root.ReadFile(".git", tripwireMaxFile)
	return err == nil && bytes.Equal(data, t.top.data)
}
