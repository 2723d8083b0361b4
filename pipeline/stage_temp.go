package pipeline

import (
	"context"
	"fmt"
	"os"

	"github.com/seed43ef5acb/runner/internal/tempdir"
)

// removeTemp removes the sandbox's scratch and the run's temporary
// directory (the --isolate copy with it).
func (r *execRun) removeTemp() {
	r.closeSandbox()
	if err := r.runTemp.Remove(); err != nil {
		fmt.Fprintf(r.opts.Stderr, "runner: %v\n", err)
	}
	r.runTemp = nil
	if r.pr != nil && r.pr.dir != "" {
		_ = os.RemoveAll(r.pr.dir)
		r.pr.dir = ""
	}
}

// makeRunTemp makes the run's temporary directory, after removing those
// of runs that were killed (their owner process is gone).
func (r *execRun) makeRunTemp(_ context.Context) error {
	if removed, err := tempdir.Collect("", runTempPattern); err != nil {
		r.log.Warn("collect temp dirs", "error", err)
	} else if len(removed) > 0 {
		r.log.Info("removed temp dirs of killed runs", "dirs", removed)
	}
	d, err := tempdir.New("", runTempPattern)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInfra, err)
	}
	r.runTemp = d
	r.modes.Guard(d.Path())
	return nil
}

// runTempPattern names the runs' temporary directories in $TMPDIR.
const runTempPattern = "runner-run-*"
