package batch

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultFailOn is the --fail-on default: task_failed and infra_failed.
func DefaultFailOn() []Status { return []Status{StatusTaskFailed, StatusInfraFailed} }

// ParseStatuses parses --fail-on values; each may itself be a
// comma-separated list ("task_failed,timeout"). "none" alone means no
// status fails the batch. Unknown or empty names, and "none" with other
// statuses, are ErrBadStatus.
func ParseStatuses(values []string) ([]Status, error) {
	out := []Status{}
	none := false
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			switch {
			case name == "":
				return nil, fmt.Errorf("%w: empty status name (give statuses, or none to never fail)", ErrBadStatus)
			case name == "none":
				none = true
				continue
			case !slices.Contains(statusNames(), name):
				return nil, fmt.Errorf("%w %q (known: %s)", ErrBadStatus, name, strings.Join(statusNames(), ", "))
			}
			out = append(out, Status(name))
		}
	}
	if none && len(out) > 0 {
		return nil, fmt.Errorf("%w: none cannot be combined with other statuses", ErrBadStatus)
	}
	return out, nil
}

func statusNames() []string {
	var names []string
	for _, s := range AllStatuses() {
		names = append(names, string(s))
	}
	return names
}

// ShouldFail is the exit decision: true when any result has a status in
// failOn. The CLI exits non-zero (1) when it is true.
func ShouldFail(results []RepoResult, failOn []Status) bool {
	for _, r := range results {
		for _, s := range failOn {
			if r.Status == s {
				return true
			}
		}
	}
	return false
}

// Err is the batch's exit decision as an error: nil unless Failed, else an
// error matching ErrBatchFailed (and pipeline.ErrTaskFailed, so the CLI
// exits 1) that counts the repositories by failing status:
// "batch failed: 2 repositories ended in a --fail-on status (task_failed: 1, infra_failed: 1)".
func (s Summary) Err() error {
	if !s.Failed {
		return nil
	}
	var parts []string
	total := 0
	for _, st := range s.FailOn {
		if n := s.Counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", st, n))
			total += n
		}
	}
	return &batchFailedError{msg: fmt.Sprintf("batch failed: %s ended in a --fail-on status (%s)",
		plural(total, "repository", "repositories"), strings.Join(parts, ", "))}
}

// batchFailedError is Summary.Err: its own message, matching ErrBatchFailed.
type batchFailedError struct{ msg string }

func (e *batchFailedError) Error() string { return e.msg }

func (e *batchFailedError) Unwrap() error { return ErrBatchFailed }

// Repositories is "1 repository", "2 repositories": every count of
// repositories in messages and reports.
func Repositories(n int) string { return plural(n, "repository", "repositories") }

// verbHave is "has" for 1, else "have".
func verbHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

// plural is "1 repository", "2 repositories".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
