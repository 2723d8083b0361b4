package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/seed43ef5acb/runner/runner/outdir"
)

// ContinueLast is the --continue value that names the newest finished run
// under the work tree's default out dir root (.runner/runs).
const ContinueLast = "last"

// resolveContinueLast replaces --continue last (when no directory "last"
// exists) by the newest finished run under .runner/runs, where default
// out dirs go (in the current directory): run ids sort by start time, and
// a finished run has its result.json and history.jsonl.
func (r *execRun) resolveContinueLast() error {
	if r.opts.Continue != ContinueLast {
		return nil
	}
	if _, err := os.Stat(ContinueLast); err == nil {
		return nil // a directory of that name wins
	}
	root := filepath.Dir(outdir.Default("id"))
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: --continue last: %w", ErrUsage, err)
	}
	slices.Reverse(entries) // ReadDir sorts by name: newest last
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if e.IsDir() && isFile(filepath.Join(dir, outdir.ResultFile)) && isFile(filepath.Join(dir, outdir.HistoryFile)) {
			fmt.Fprintf(r.opts.Stderr, "runner: note: --continue last is %s\n", dir)
			r.opts.Continue = dir
			return nil
		}
	}
	return fmt.Errorf("%w: --continue last: no finished run under %s (runs given their own --out are not looked for there): "+
		"give the run's out dir, --continue DIR", ErrUsage, root)
}

// isFile reports whether path is a regular file (symlinks not followed).
func isFile(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}
