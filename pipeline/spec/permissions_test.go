package spec

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed43ef5acb/runner/tools/permission"
)

func TestRulesetOf(t *testing.T) {
	tests := []struct {
		name    string
		perms   map[string]any
		want    permission.Ruleset
		wantErr string
	}{
		{"empty", nil, nil, ""},
		{"bare action", map[string]any{"read": "allow"}, permission.Ruleset{{Permission: "read", Pattern: "*", Action: permission.Allow}}, ""},
		{"typed action", map[string]any{"doom_loop": permission.Deny}, permission.Ruleset{{Permission: "doom_loop", Pattern: "*", Action: permission.Deny}}, ""},
		{"patterns sorted", map[string]any{
			"edit": map[string]any{"src/**": "allow", ".github/**": "deny"},
			"bash": map[string]string{"go test *": "allow"},
		}, permission.Ruleset{
			{Permission: "bash", Pattern: "go test *", Action: permission.Allow},
			{Permission: "edit", Pattern: ".github/**", Action: permission.Deny},
			{Permission: "edit", Pattern: "src/**", Action: permission.Allow},
		}, ""},
		{"ask", map[string]any{"bash": "ask"}, nil, "headless"},
		{"unknown action", map[string]any{"read": map[string]any{"*": "alow"}}, nil, `did you mean "allow"?`},
		{"unknown permission", map[string]any{"raed": "allow"}, nil, `unknown permission "raed"`},
		{"bad glob", map[string]any{"edit": map[string]any{"[x": "allow"}}, nil, "bad glob"},
		{"bad value", map[string]any{"read": 3}, nil, "expected an action"},
		{"bad pattern value", map[string]any{"read": map[string]any{"*": true}}, nil, "expected allow or deny"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RulesetOf(tt.perms)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("RulesetOf error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RulesetOf (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSpecRuleset checks that what Load decodes converts without error.
func TestSpecRuleset(t *testing.T) {
	s, err := Load("../../examples/fix-tests/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := s.Ruleset()
	if err != nil {
		t.Fatal(err)
	}
	want := permission.Rule{Permission: "edit", Pattern: ".github/**", Action: permission.Deny}
	found := false
	for _, r := range rules {
		found = found || r == want
	}
	if !found {
		t.Errorf("Ruleset() = %v, missing %v", rules, want)
	}
}
