// Package gitignore is a port of git's ignore rules: wildmatch.c and the
// exclude logic of dir.c (pattern parsing, anchoring, "**", negation,
// directory-only patterns, last match wins, deepest file first), plus the
// places git reads them from: the global excludes file (core.excludesFile
// or $XDG_CONFIG_HOME/git/ignore), the repository's info/exclude (through
// the commondir of a linked worktree) and the .gitignore files. Snapshots
// (runner/snapshot) and the search tools (glob, grep, list) use it, so both
// give git's answer to "is this path ignored?". go-git's matcher is not
// used: it inverts "[!…]" classes (go-git #2006), re-includes files inside
// excluded directories and skips info/exclude in v5.19 (see
// /work/shared/research/gogit-snapshot.md).
//
// Paths are slash-separated and relative to the repository root; a
// pattern's base is the directory of its file ("" or "dir/sub/"). Callers
// walk top-down and never descend into an excluded directory, which gives
// git's rule that nothing inside one can be re-included:
//
//	repo, _ := gitignore.FindRepo(workTree)   // nil outside a repository
//	st := gitignore.Base(repo, gitignore.LoadConfig(os.Getenv, repo))
//	st = st.Push(gitignore.ParseFile(data, "sub/")) // sub/.gitignore
//	if st.Excluded("sub/x.log", false) { … }
//
// Imports: the standard library only.
package gitignore
