package pipeline

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/seed43ef5acb/runner/runner/historyfile"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

// startHistory is the "history" stage: it opens the history now, or,
// when run.started is held for the base tree, leaves it to releaseStart.
func (r *execRun) startHistory(ctx context.Context) error {
	if r.held != nil {
		return skip("opened with run.started, once the base tree is recorded")
	}
	return r.openHistory(ctx)
}

// openHistory creates this run's history.jsonl (after run.started: the
// header names the base tree).
func (r *execRun) openHistory(_ context.Context) error {
	header := historyfile.Line{RunID: r.runID, Task: r.spec.Name, SpecSHA256: r.specSHA,
		BaseTree: string(r.base), Model: r.modelName, Excludes: r.excludes(), Isolated: r.isolated,
		Prompt: cutPrompt(r.userMessage())}
	if r.gh != nil {
		header.RunURL = r.gh.Env.RunURL()
	}
	if c := r.continued; c != nil {
		header.Continues, header.Chain = c.history.Header.RunID, c.chain
	}
	h, err := historyfile.Create(r.outFiles, filepath.Join(r.outDir, outdir.HistoryFile), header, r.redactor)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInfra, err)
	}
	r.history = h
	return nil
}

// closeHistory closes history.jsonl.
func (r *execRun) closeHistory() {
	if r.history != nil {
		_ = r.history.Close()
		r.history = nil
	}
}
