package pipeline

import (
	"fmt"
	"strings"
)

// githubSwitch reads RUNNER_COMMENT or RUNNER_PULL_REQUEST: "true" or "false" in any
// case; set is false when the variable is empty.
func (r *execRun) githubSwitch(name string) (on, set bool) {
	switch strings.ToLower(r.getenv(name)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// checkGitHubSwitches refuses a switch that is neither true nor false, so
// that "yes" or "1" is never silently ignored.
func (r *execRun) checkGitHubSwitches() error {
	switches := []struct{ name, input, key string }{ // the variable, the action's input, the spec's key
		{"RUNNER_COMMENT", "comment", "github.comment"},
		{"RUNNER_PULL_REQUEST", "pull-request", "github.pull_request"},
	}
	for _, s := range switches {
		v := r.getenv(s.name)
		if _, set := r.githubSwitch(s.name); v != "" && !set {
			return fmt.Errorf("%w: %s is %q (the action's %s input): use true or false, or leave it empty for the spec's %s",
				ErrUsage, s.name, v, s.input, s.key)
		}
	}
	return nil
}
