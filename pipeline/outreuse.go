package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed43ef5acb/runner/runner/outdir"
)

// earlierRun describes the run whose outputs the out dir dir already holds
// ("run 20261202T… (status success)"; "an earlier run" when its
// result.json is missing or unreadable); "" when dir holds no run's
// outputs (no result.json and no events.jsonl).
func earlierRun(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, outdir.ResultFile))
	if err != nil {
		if _, serr := os.Stat(filepath.Join(dir, outdir.EventsFile)); serr != nil {
			return ""
		}
		return "an earlier run"
	}
	var res struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	if json.Unmarshal(data, &res) != nil || res.RunID == "" {
		return "an earlier run"
	}
	if res.Status == "" {
		return "run " + res.RunID
	}
	return fmt.Sprintf("run %s (status %s)", res.RunID, res.Status)
}

// runOutputs are the names a run writes in its out dir: a run that
// replaces an earlier one's outputs removes them all first.
var runOutputs = []string{outdir.EventsFile, outdir.PatchFile, outdir.ResultFile, outdir.SummaryFile,
	outdir.HistoryFile, outdir.RunPatch, outdir.MCPStderrDir, outdir.ToolOutputDir}

// replaceEarlierOut removes the outputs of an earlier run that --out
// holds (runOutputs; other files stay), saying so on stderr unless
// --quiet: a run.patch or mcp/ it does not write would pass for its own.
func (r *execRun) replaceEarlierOut() error {
	if r.opts.Out == "" {
		return nil
	}
	prev := earlierRun(r.opts.Out)
	if prev == "" {
		return nil
	}
	if !r.opts.Quiet {
		fmt.Fprintf(r.opts.Stderr, "runner: note: --out %s holds the outputs of %s: this run replaces them "+
			"(give each run its own --out, or none: .runner/runs/<run id>/, to keep them)\n", r.opts.Out, prev)
	}
	for _, name := range runOutputs {
		if err := os.RemoveAll(filepath.Join(r.opts.Out, name)); err != nil {
			return fmt.Errorf("%w: --out %s holds the outputs of %s, which this run replaces: %w", ErrUsage, r.opts.Out, prev, err)
		}
	}
	return nil
}

// sameDir reports whether paths a and b name the same directory (one
// that may not exist yet: then the same absolute path).
func sameDir(a, b string) bool {
	if fa, err := os.Stat(a); err == nil {
		if fb, err := os.Stat(b); err == nil {
			return os.SameFile(fa, fb)
		}
	}
	return sameFile(a, b)
}
