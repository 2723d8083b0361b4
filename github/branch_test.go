package github

import (
	"errors"
	"testing"
)

func TestBranchName(t *testing.T) {
	ev, err := LoadEvent("issue_comment", readEvent(t, "issue_comment.created.pull_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tmpl string
		data BranchData
		want string
	}{
		{"", NewBranchData("fix-tests", ev, "77", "0123456789abcdef"), "runner/fix-tests/pr-3"},
		{"", NewBranchData("nightly", nil, "77", ""), "runner/nightly"},
		{"bot/{{ .Kind }}-{{ .Number }}-{{ .RunID }}-{{ .SHA }}", NewBranchData("t", ev, "77", "0123456789abcdef"), "bot/pr-3-77-0123456"},
		{"x/{{ .Task }}", BranchData{Task: "fix the: bug?.."}, "x/fix-the-bug-"},
	}
	for _, tt := range tests {
		got, err := BranchName(tt.tmpl, tt.data)
		if err != nil || got != tt.want {
			t.Errorf("BranchName(%q) = %q, %v; want %q", tt.tmpl, got, err, tt.want)
		}
	}
	for _, bad := range []string{"{{ .Nope }}", "{{", "{{ .Task }}"} {
		if _, err := BranchName(bad, BranchData{}); !errors.Is(err, ErrBranchName) {
			t.Errorf("BranchName(%q) err = %v", bad, err)
		}
	}
}
