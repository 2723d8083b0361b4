package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/runner/historyfile"
	"github.com/seed43ef5acb/runner/runner/outdir"
)

// finalRecord is what --continue reads of an earlier run's run.finished.
type finalRecord struct {
	Type    string               `json:"type"`
	RunID   string               `json:"run_id"`
	History *event.HistoryDigest `json:"history"`
	where   string               // the file it was read from
}

// readFinalRecord reads the run.finished record of the run whose out dir
// is dir: result.json, or the last line of events.jsonl when there is no
// result.json. It returns nil when neither holds one (the run was killed
// before it ended, or the files are gone).
func readFinalRecord(dir string) (*finalRecord, error) {
	path := filepath.Join(dir, outdir.ResultFile)
	data, err := os.ReadFile(path)
	if err == nil {
		rec := &finalRecord{where: path}
		if err := json.Unmarshal(data, rec); err != nil || rec.Type != (event.RunFinished{}).EventType() {
			return nil, fmt.Errorf("%w: %s is not a run.finished record (%v): the run's out dir is damaged; restore it as the runner left it, or start a fresh run",
				ErrHistory, path, err)
		}
		return rec, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %w", ErrHistory, err)
	}
	path = filepath.Join(dir, outdir.EventsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil //nolint:nilerr // no log here either: no final record
	}
	defer f.Close()
	recs, _ := event.ReadLog(f) // the records before a bad line still count
	if len(recs) == 0 || recs[len(recs)-1].Type != (event.RunFinished{}).EventType() {
		return nil, nil
	}
	rec := &finalRecord{where: path}
	if err := recs[len(recs)-1].Decode(rec); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrHistory, path, err)
	}
	return rec, nil
}

// verifyHistory checks h, read from dir's history.jsonl, against the
// digest (SHA-256 and size) its run's final record carries. A history
// that does not match, or a final record of another run, is an error
// (ErrHistory: exit 2) that --force does not lift: the file is not what
// the runner wrote, and continuing would send it to the model. A run
// with no digest to check (killed before its final record, or made by a
// runner before the field existed) returns the reason as missing; the
// caller refuses it unless --force.
func verifyHistory(dir string, h *historyfile.History) (missing string, err error) {
	path := filepath.Join(dir, outdir.HistoryFile)
	rec, err := readFinalRecord(dir)
	switch {
	case err != nil:
		return "", err
	case rec == nil:
		return fmt.Sprintf("run %s has no final record (neither %s nor a run.finished line in %s): it was killed before it ended, so %s cannot be checked",
			h.Header.RunID, outdir.ResultFile, outdir.EventsFile, path), nil
	case rec.RunID != h.Header.RunID:
		return "", fmt.Errorf("%w: %s is the record of run %s, but %s is the history of run %s: the out dir mixes two runs; continue from the out dir of one run, as the runner left it",
			ErrHistory, rec.where, rec.RunID, path, h.Header.RunID)
	case rec.History == nil:
		return fmt.Sprintf("%s carries no history digest (a runner older than this one wrote it), so %s cannot be checked", rec.where, path), nil
	case *rec.History != h.Digest:
		return "", fmt.Errorf("%w: %s does not match the history digest in %s (sha256 %.12s…, %d bytes; the file is sha256 %.12s…, %d bytes): it was changed after run %s ended, and nothing was sent to the model; restore the run's out dir as the runner left it (for a pull request: its Actions artifact), or start a fresh run (--force does not lift this)",
			ErrHistory, path, rec.where, rec.History.SHA256, rec.History.Size, h.Digest.SHA256, h.Digest.Size, h.Header.RunID)
	}
	return "", nil
}

// checkHistoryDigest is verifyHistory for loadContinued: a missing digest
// is refused unless --force, and then recorded as a reason the run was
// forced (run.started's continues.forced) with a warning.
func (r *execRun) checkHistoryDigest(c *continued) error {
	missing, err := verifyHistory(c.dir, c.history)
	if err != nil || missing == "" {
		return err
	}
	if !r.opts.Force {
		return fmt.Errorf("%w: %s; give --force to continue it unchecked (what it holds is sent to the model as it is), or start a fresh run", ErrHistory, missing)
	}
	fmt.Fprintf(r.opts.Stderr, "runner: warning: %s; continuing unchecked (--force)\n", missing)
	c.forced, c.why = true, append(c.why, "its history has no digest to check")
	return nil
}
