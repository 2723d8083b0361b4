package batchreport

import (
	"cmp"
	"slices"
	"time"

	"github.com/seed43ef5acb/runner/pipeline/batch"
	"github.com/seed43ef5acb/runner/runner/event"
)

// Version is the version of the JSON report's shape (Report.Version).
const Version = 1

// StatusMissing is the report's status of a repository of the manifest
// that has no result in the night's dirs (a shard did not finish or was
// not given). It is not a batch status: results.jsonl never holds it.
const StatusMissing batch.Status = "missing"

// Report is one batch report: the latest night in full and every night's
// totals as a trend. It is the JSON format's document.
type Report struct {
	Version    int           `json:"version"`
	Name       string        `json:"name"`        // the batch's name (manifest)
	Dirs       []string      `json:"dirs"`        // the latest night's out dirs, as given
	FinishedAt time.Time     `json:"finished_at"` // the latest finish among its results
	Totals     Totals        `json:"totals"`
	Statuses   []StatusCount `json:"statuses"`           // non-zero counts, in batch.AllStatuses order, then missing
	Errors     []ErrorGroup  `json:"errors"`             // by count, largest first
	Repos      []Repo        `json:"repos"`              // manifest order
	Nights     []Night       `json:"nights"`             // oldest first; the last is this report's night
	Problems   []string      `json:"problems,omitempty"` // duplicate results, results not in the manifest
}

// Totals sums a night's repositories.
type Totals struct {
	Repositories int          `json:"repositories"`           // in the manifest (or with a result, without one)
	Succeeded    int          `json:"succeeded"`              // success or no_change
	SuccessRate  float64      `json:"success_rate"`           // Succeeded / Repositories, 0..1
	CostUSD      *float64     `json:"cost_usd"`               // null when a repository's cost is unknown (batch.AddCost)
	CostUnknown  int          `json:"cost_unknown,omitempty"` // repositories whose cost is unknown
	Tokens       event.Tokens `json:"tokens"`                 // summed from each repository's result.json
	DurationMS   int64        `json:"duration_ms"`            // summed over repositories (not wall clock)
	Steps        int          `json:"steps"`
	FilesChanged int          `json:"files_changed"`
	Additions    int          `json:"additions"` // lines added by the patches
	Deletions    int          `json:"deletions"` // lines removed by the patches
	PullRequests int          `json:"pull_requests"`
}

// StatusCount is how many repositories ended in a status.
type StatusCount struct {
	Status batch.Status `json:"status"`
	Count  int          `json:"count"`
}

// ErrorGroup is the repositories that did not succeed, by error class: the
// result's error_class, or its status when it has none ("timeout",
// "missing", …); publish errors form the group "publish".
type ErrorGroup struct {
	Class    string        `json:"class"`
	Count    int           `json:"count"`
	Statuses []StatusCount `json:"statuses"`
	Example  string        `json:"example,omitempty"` // the first error message, one line, at most 300 characters
	Repos    []string      `json:"repos"`             // ids, manifest order
}

// Repo is one repository's latest result, with what its dir adds.
type Repo struct {
	ID           string           `json:"id"`
	Repo         string           `json:"repo"`
	Status       batch.Status     `json:"status"`
	CostUSD      *float64         `json:"cost_usd"` // null when unknown
	Steps        int              `json:"steps"`
	DurationMS   int64            `json:"duration_ms"`
	Tokens       event.Tokens     `json:"tokens"`
	FilesChanged int              `json:"files_changed"`
	Additions    int              `json:"additions"`
	Deletions    int              `json:"deletions"`
	Error        string           `json:"error,omitempty"`
	ErrorClass   event.ErrorClass `json:"error_class,omitempty"`
	Attempts     int              `json:"attempts,omitempty"`
	Commit       string           `json:"commit,omitempty"`
	Shard        string           `json:"shard,omitempty"`
	PRURL        string           `json:"pr_url,omitempty"`
	PublishError string           `json:"publish_error,omitempty"`
	Links        Links            `json:"links"`
	Dir          string           `json:"-"` // the out dir that holds its result
}

// Links are slash-separated URL paths relative to the report file (see
// Options.LinkBase); "" when the file does not exist.
type Links struct {
	Patch   string `json:"patch,omitempty"`
	Summary string `json:"summary,omitempty"`
	Events  string `json:"events,omitempty"`
}

// Night is one night's totals, for the trend.
type Night struct {
	Label      string        `json:"label"` // its dirs, comma-separated
	Dirs       []string      `json:"dirs"`
	FinishedAt time.Time     `json:"finished_at"`
	Totals     Totals        `json:"totals"`
	Statuses   []StatusCount `json:"statuses"`
}

// Succeeded reports whether a status counts as a success in the success
// rate: the task succeeded, with or without changes.
func Succeeded(s batch.Status) bool {
	return s == batch.StatusSuccess || s == batch.StatusNoChange
}

// Lines is the patch's changed lines, additions plus deletions.
func (r Repo) Lines() int { return r.Additions + r.Deletions }

// Top returns up to n repositories with the largest key, largest first,
// ties by id; repositories whose key is 0 are left out.
func Top(repos []Repo, n int, key func(Repo) float64) []Repo {
	var out []Repo
	for _, r := range repos {
		if key(r) > 0 {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Repo) int {
		return cmp.Or(cmp.Compare(key(b), key(a)), cmp.Compare(a.ID, b.ID))
	})
	return out[:min(n, len(out))]
}

// Cost is a key for Top: the repository's cost in USD (an unknown one is
// 0, so Top leaves it out).
func Cost(r Repo) float64 { return batch.KnownCost(r.CostUSD) }

// Duration is a key for Top: the repository's run time in milliseconds.
func Duration(r Repo) float64 { return float64(r.DurationMS) }

// LinesChanged is a key for Top: lines added and removed.
func LinesChanged(r Repo) float64 { return float64(r.Lines()) }
