package treewalk

import (
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/internal/gitignore"
)

// StartRules returns the ignore rules in force in the work-tree-relative
// directory start of the work tree root (absolute) and the work tree's
// place in its repository (Options.Rules and Options.Prefix): the
// repository's base rules (global excludes file, info/exclude, the
// .gitignore files above the work tree) and the .gitignore files of
// start's parents. When start or a parent is ignored the result is nil
// (it was asked for: only the .gitignore files inside it apply). getenv
// reads the environment for git's configuration (os.Getenv in production).
func StartRules(root, start string, getenv func(string) string) (rules *gitignore.Stack, prefix string) {
	repo, _ := gitignore.FindRepo(root) // unreadable .git: no repository rules
	if repo != nil {
		prefix = repo.Prefix
	}
	st := gitignore.Base(repo, gitignore.LoadConfig(getenv, repo))
	if start == "." {
		return st, prefix
	}
	if gitignore.PathExcluded(root, st, prefix, start, true) {
		return nil, prefix
	}
	parts := strings.Split(start, "/")
	for i := range parts {
		dir := filepath.Join(root, filepath.FromSlash(strings.Join(parts[:i], "/")))
		if b, err := gitignore.ReadRegular(filepath.Join(dir, ".gitignore")); err == nil {
			base := prefix
			if i > 0 {
				base += strings.Join(parts[:i], "/") + "/"
			}
			st = st.Push(gitignore.ParseFile(b, base))
		}
	}
	return st, prefix
}
