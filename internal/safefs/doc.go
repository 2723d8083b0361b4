// Package safefs reads, writes, removes and chmods files beneath a root
// directory without following symlinks, for the runner's repairs of paths
// a command could have changed (the .git tripwire, the task spec, the
// runner's state, the out dir's mirror, the modes of its directories).
//
// Every path is relative to a Root and resolved one component at a time:
// openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS on Linux, openat with
// O_NOFOLLOW per component elsewhere. A symlink never leads a repair out:
//   - a read or a stat through one fails (ErrSymlink);
//   - a write replaces whatever is in the way as a whole: a symlink or a
//     file where a directory should be is removed and the directory made
//     (Root.Replaced names it), and the file itself is written to a new
//     name and renamed over the old entry, so a symlink or hard link there
//     is replaced, never written through;
//   - a removal unlinks the entry itself; a symlinked parent is left alone
//     (the entry is not beneath the root);
//   - a chmod acts on the descriptor of the entry opened without following
//     it, and refuses a symlink.
//
// The root itself is trusted: callers resolve it (filepath.EvalSymlinks)
// before any command runs.
//
// Imports: golang.org/x/sys/unix.
package safefs
