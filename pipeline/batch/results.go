package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/secret"
)

// File names inside an out dir.
const (
	ResultsFile = "results.jsonl" // one RepoResult per line, appended as repos finish
	// RepoResultFile is out/<repo-id>/batch-result.json, the repository's
	// latest RepoResult. (out/<repo-id>/result.json is the exec pipeline's
	// run.finished record and is left alone.)
	RepoResultFile = "batch-result.json"
	SummaryFile    = "summary.md" // Markdown summary (Merge, Run)
)

// Status is a repository's outcome in a batch.
type Status string

// Statuses of a repository in results.jsonl.
const (
	StatusSuccess        Status = "success"         // the task succeeded and changed files
	StatusNoChange       Status = "no_change"       // the task succeeded without changing anything
	StatusTaskFailed     Status = "task_failed"     // checks failed, the model gave up, max steps, blocked
	StatusInfraFailed    Status = "infra_failed"    // clone, provider or crash errors, after retries
	StatusTimeout        Status = "timeout"         // the per-repository timeout elapsed
	StatusBudgetExceeded Status = "budget_exceeded" // the per-repository cost limit was reached
	StatusSkipped        Status = "skipped"         // not started: the batch's total cost cap was reached
)

// AllStatuses lists every status in report order.
func AllStatuses() []Status {
	return []Status{StatusSuccess, StatusNoChange, StatusTaskFailed, StatusInfraFailed,
		StatusTimeout, StatusBudgetExceeded, StatusSkipped}
}

// Final reports whether a repository with this status is done: a resumed
// run does not start it again (skipped is not final).
func (s Status) Final() bool { return s != StatusSkipped && s != "" }

// Failed reports whether --only-failed reruns this status.
func (s Status) Failed() bool {
	return s == StatusTaskFailed || s == StatusInfraFailed || s == StatusTimeout
}

// RepoResult is one line of results.jsonl and the content of
// out/<repo-id>/batch-result.json. PatchPath is relative to the out dir, so
// merged and moved out dirs stay valid. When a repository has several
// lines (a rerun, a publish), the last one is its result.
type RepoResult struct {
	Repo         string           `json:"repo"` // URL or path as written in the spec
	ID           string           `json:"id"`
	Status       Status           `json:"status"`
	CostUSD      *float64         `json:"cost_usd"` // null when unknown (see AddCost)
	Steps        int              `json:"steps"`
	DurationMS   int64            `json:"duration_ms"`
	FilesChanged int              `json:"files_changed"`
	PatchPath    string           `json:"patch_path,omitempty"`
	Error        string           `json:"error,omitempty"`
	ErrorClass   event.ErrorClass `json:"error_class,omitempty"`
	Attempts     int              `json:"attempts,omitempty"` // executions, counting infrastructure retries
	Commit       string           `json:"commit,omitempty"`   // the base commit the task ran on
	Shard        string           `json:"shard,omitempty"`    // "I/N" when sharded
	FinishedAt   time.Time        `json:"finished_at"`
	PRURL        string           `json:"pr_url,omitempty"`
	PublishedAt  *time.Time       `json:"published_at,omitempty"`
	PublishError string           `json:"publish_error,omitempty"`
}

// resultsLog appends results to out/results.jsonl, one fsynced line per
// call, and mirrors each into out/<id>/batch-result.json. Safe for concurrent use.
type resultsLog struct {
	dir string
	mu  sync.Mutex
	f   *os.File
}

func openResultsLog(dir string) (*resultsLog, error) {
	return openResultsLogAt(dir, filepath.Join(dir, ResultsFile))
}

// openResultsLogAt appends to the results file at path; per-repository
// batch-result.json files go under dir.
func openResultsLogAt(dir, path string) (*resultsLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create out dir: %w", err)
	}
	if err := dropTornTail(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open results: %w", err)
	}
	return &resultsLog{dir: dir, f: f}, nil
}

// dropTornTail repairs a final line without its newline (a write cut
// short by a kill): a complete JSON object gets its newline, anything else
// is truncated, so the next append starts on a line of its own and
// ReadResults keeps reading what it read before.
func dropTornTail(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || len(data) == 0 || data[len(data)-1] == '\n' {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read results: %w", err)
	}
	cut := bytes.LastIndexByte(data, '\n') + 1
	if tail := bytes.TrimSpace(data[cut:]); len(tail) == 0 || parseLine(tail) == nil {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fmt.Errorf("repair results: %w", err)
		}
		_, err = f.Write([]byte("\n"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("repair results: %w", err)
		}
		return nil
	}
	if err := os.Truncate(path, int64(cut)); err != nil {
		return fmt.Errorf("drop torn results line: %w", err)
	}
	return nil
}

// Append writes r as one line and syncs it to disk before returning, then
// rewrites out/<id>/batch-result.json (not synced: results.jsonl is the record).
func (l *resultsLog) Append(r RepoResult) error {
	r.scrub()
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode result %s: %w", r.ID, err)
	}
	l.mu.Lock()
	_, err = l.f.Write(append(line, '\n'))
	l.mu.Unlock()
	if err == nil {
		// Outside the lock: a concurrent Append's sync may cover this line
		// too (group commit); either way the line is on disk on return.
		err = l.f.Sync()
	}
	if err != nil {
		return fmt.Errorf("append result %s: %w", r.ID, err)
	}
	return writeJSON(filepath.Join(l.dir, r.ID, RepoResultFile), r, false)
}

func (l *resultsLog) Close() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("close results: %w", err)
	}
	return nil
}

// ReadResults reads dir/results.jsonl in order. A missing file is no
// results. A final line without its newline that does not parse (the
// process was killed mid-write) is ignored; any other malformed line is an
// error.
func ReadResults(dir string) ([]RepoResult, error) {
	path := filepath.Join(dir, ResultsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	lines := bytes.Split(data, []byte("\n"))
	out := make([]RepoResult, 0, len(lines))
	for i, line := range lines {
		b := bytes.TrimSpace(line)
		if len(b) == 0 {
			continue
		}
		var r RepoResult
		if err := json.Unmarshal(b, &r); err != nil {
			if i == len(lines)-1 {
				break // a torn final write (see dropTornTail)
			}
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Latest returns each repository's last result, by id.
func Latest(results []RepoResult) map[string]RepoResult {
	out := make(map[string]RepoResult, len(results))
	for _, r := range results {
		out[r.ID] = r
	}
	return out
}

// parseLine reports whether b is a results line.
func parseLine(b []byte) error {
	var r RepoResult
	return json.Unmarshal(b, &r)
}

// scrub redacts URL credentials in what a result names (its repository,
// its error: a clone's error quotes the URL).
func (r *RepoResult) scrub() {
	r.Repo, r.Error = secret.RedactURLCredentials(r.Repo), secret.RedactURLCredentials(r.Error)
}
