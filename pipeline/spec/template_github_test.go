package spec

import (
	"strings"
	"testing"
)

// TestTemplateGitHubFields: .GitHub and .Event references are checked when
// the spec is loaded (runner validate and runner exec alike), with the
// spec's file, line and column and a did-you-mean.
func TestTemplateGitHubFields(t *testing.T) {
	tests := []struct {
		prompt string
		want   string // "" = valid
	}{
		{"{{ .GitHub.Repository }} #{{ .GitHub.Number }}", ""},
		{"{{ .GitHub.repository }}", `t.yaml:3:14: prompt: unknown template field .GitHub.repository (did you mean .GitHub.Repository? The fields are CamelCase)`},
		{"{{ .GitHub.HeadSha }}", "did you mean .GitHub.HeadSHA?"},
		{"{{ .GitHub.Nonsense }}", "the .GitHub fields are EventName, Action, Repository"},
		{"{{ .Event.pull_request.head.ref }} {{ .Event.issue.user.login }} {{ .Event.comment.body }}", ""},
		{"{{ .Event.inputs.anything_the_workflow_declares }}", ""},
		{"{{ .Event.head_commit.message }} {{ .Event.schedule }}", ""},
		{"{{ .Event.pull_request.head.reff }}", "unknown event field .Event.pull_request.head.reff (did you mean .Event.pull_request.head.ref?)"},
		{"{{ .Event.pullrequest.title }}", "did you mean .Event.pull_request?"},
		{"{{ .Event.action.name }}", ".Event.action has no fields"},
		{"{{ if .Event.issue }}{{ .Event.issue.titel }}{{ end }}", "did you mean .Event.issue.title?"},
		// inside range the dot is the member: not checked
		{"{{ range .Event.issue.labels }}{{ .name }}{{ end }}", ""},
	}
	for _, tt := range tests {
		spec := "version: 1\nname: t\nprompt: \"" + strings.ReplaceAll(tt.prompt, `"`, `\"`) + "\"\nmodel: m\n"
		_, err := LoadBytes("t.yaml", []byte(spec))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.prompt, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s:\n got %v\nwant %s", tt.prompt, err, tt.want)
		}
	}
}
