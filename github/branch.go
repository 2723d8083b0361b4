package github

import (
	"fmt"
	"regexp"
	"strings"
	"text/template"
)

// DefaultBranchTemplate names a pull request branch when the spec gives no
// template: stable per task and issue or pull request, so a second run
// updates the same pull request.
const DefaultBranchTemplate = "runner/{{ .Task }}{{ if .Number }}/{{ .Kind }}-{{ .Number }}{{ end }}"

// BranchData is what a branch template sees.
type BranchData struct {
	Task   string
	Number int    // issue or pull request number, 0 when none
	Kind   string // "pr" or "issue"
	RunID  string
	SHA    string // short base commit
}

// NewBranchData collects the template data of an event.
func NewBranchData(task string, ev *Event, runID, baseSHA string) BranchData {
	d := BranchData{Task: task, RunID: runID, SHA: baseSHA}
	if ev != nil {
		d.Number, d.Kind = ev.GitHub.Number, "issue"
		if ev.GitHub.IsPR {
			d.Kind = "pr"
		}
	}
	if len(d.SHA) > 7 {
		d.SHA = d.SHA[:7]
	}
	return d
}

// badRefChars are characters git refuses in ref names, and spaces.
func badRefChars() *regexp.Regexp { return regexp.MustCompile(`[\x00-\x20~^:?*\[\\\x7f]+`) }

// BranchName renders tmpl (DefaultBranchTemplate when empty) with d,
// replaces characters git refuses by "-", and validates the result.
func BranchName(tmpl string, d BranchData) (string, error) {
	if tmpl == "" {
		tmpl = DefaultBranchTemplate
	}
	t, err := template.New("branch").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return "", fmt.Errorf("%w: template %q: %w", ErrBranchName, tmpl, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("%w: template %q: %w", ErrBranchName, tmpl, err)
	}
	name := badRefChars().ReplaceAllString(strings.TrimSpace(b.String()), "-")
	for strings.Contains(name, "..") {
		name = strings.ReplaceAll(name, "..", ".")
	}
	name = strings.Trim(strings.ReplaceAll(name, "//", "/"), "/.")
	if err := ValidateBranch(name); err != nil {
		return "", err
	}
	return name, nil
}
