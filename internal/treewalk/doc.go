// Package treewalk is the one walk of a work tree that snapshots
// (runner/snapshot) and the search tools (glob, grep, list) share: a
// parallel listing of directories with getdents, opened relative to their
// parents without following symlinks, that skips every .git and decides
// each entry by git's ignore rules (package gitignore: the rules that
// apply at the start, then each directory's .gitignore on the way down).
//
// What a caller keeps is its own: Options.Visit sees every entry with
// Ignored set by the rules and returns Skip, Keep or Descend (snapshots
// keep ignored paths the index tracks and stop at nested repositories;
// the tools skip what the permission rules hide). Options.Work runs per
// kept file in the workers, with the directory open (an fd for openat or
// fstatat). Walk passes the kept entries to a function in walk order
// (lexical, depth first) in the calling goroutine; Tree returns the whole
// listing after running Options.Post on each directory bottom-up, also in
// the workers (snapshots hash their trees there).
//
//	err := treewalk.Walk(ctx, treewalk.Options{Root: wt, Start: ".", Rules: rules},
//		func(e *treewalk.Entry) error { fmt.Println(e.Rel); return nil })
//
// Imports: internal/gitignore and golang.org/x/sys/unix.
package treewalk
