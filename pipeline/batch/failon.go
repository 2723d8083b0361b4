package batch

import (
	"fmt"
	"strings"
)

// DefaultFailOn is the --fail-on default: task_failed and infra_failed.
func DefaultFailOn() []Status { return []Status{StatusTaskFailed, StatusInfraFailed} }

// ParseStatuses parses --fail-on values; each may itself be a
// comma-separated list ("task_failed,timeout"). "none" alone means no
// status fails the batch. Unknown names are ErrBadStatus.
func ParseStatuses(values []string) ([]Status, error) {
	out := []Status{}
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" || name == "none" {
				continue
			}
			st := Status(name)
			if !contains(statusNames(), name) {
				return nil, fmt.Errorf("%w %q (known: %s)", ErrBadStatus, name, strings.Join(statusNames(), ", "))
			}
			out = append(out, st)
		}
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
// exits 1) that counts the repositories by failing status.
func (s Summary) Err() error {
	if !s.Failed {
		return nil
	}
	var parts []string
	for _, st := range s.FailOn {
		if n := s.Counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", st, n))
		}
	}
	return fmt.Errorf("%w: %s", ErrBatchFailed, strings.Join(parts, ", "))
}
