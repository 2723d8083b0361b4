// Package snapshot records a work tree as git trees in a private object
// store with go-git plumbing, and diffs any two trees into a patch that
// `git apply` accepts. It never writes into the user's repository.
//
// Usage:
//
//	s, err := snapshot.Open(ctx, snapshot.Options{WorkTree: dir, Exclude: []string{"out"}})
//	defer s.Close()
//	base, err := s.Track(ctx)                      // full stat walk
//	…                                              // a tool writes a.go
//	step, err := s.TrackPaths(ctx, []string{"a.go"}) // re-stat only a.go
//	files, err := s.Patch(ctx, base, step, w)      // unified diff to w
//
// The file set is git's: files tracked in the user's index (even when an
// ignore rule matches them) plus untracked files that the global excludes
// file, info/exclude and nested .gitignore files do not ignore, matched
// with a port of git's wildmatch and dir.c rules. Nested repositories and
// submodules become gitlinks; symlinks are stored as links with their
// target as content; the executable bit is kept; .git entries, sockets,
// FIFOs and devices are skipped. A plain directory works too.
//
// The store is a bare git directory (default under os.UserCacheDir) that
// the git CLI can read. Its objects/info/alternates names the user's
// object directory, so on the first Track the blob hashes of the user's
// index are reused for files whose stat matches (unless a content filter
// such as core.autocrlf or a .gitattributes text/eol/filter attribute
// applies) and only trees are written. A stat cache (size, mtime, ctime,
// inode, mode → blob id, with a 2 s racy window) makes later Tracks cost
// one lstat per file. Objects go to one pack file per Track (and the steps
// between two full Tracks share one, completed by the next full Track or
// Close; see held.go), not to a loose file per object.
//
// Caveat: a `git gc --prune` in the user's repository can delete blobs
// that only old snapshots reference through the alternate; new content is
// always written to the private store.
//
// Design and measurements: /work/shared/research/gogit-snapshot.md. The
// go-git worktree API (Add, Commit, Status) is deliberately not used.
//
// Imports: runner/event, internal/gitignore, internal/safefs, internal/treewalk and go-git
// plumbing.
package snapshot
