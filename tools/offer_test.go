package tools

import (
	"reflect"
	"slices"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// TestOffered: a built-in tool is offered only when the ruleset has an
// allow rule for its permission (any pattern); a deny rule alone offers
// nothing; a spec that allows all three permissions gets every built-in,
// the very same tools in the same order.
func TestOffered(t *testing.T) {
	t.Parallel()
	allow := func(perm, pat string) permission.Rule {
		return permission.Rule{Permission: perm, Pattern: pat, Action: permission.Allow}
	}
	deny := func(perm, pat string) permission.Rule {
		return permission.Rule{Permission: perm, Pattern: pat, Action: permission.Deny}
	}
	tests := []struct {
		name  string
		rules permission.Ruleset
		want  []string
	}{
		{"none", nil, []string{}},
		{"mcp only", permission.Ruleset{allow(permission.MCP, "calc/*")}, []string{}},
		{"read", permission.Ruleset{allow(permission.Read, "*")}, []string{"glob", "grep", "list", "read"}},
		{"edit by pattern", permission.Ruleset{allow(permission.Edit, "src/**"), deny(permission.Edit, ".github/**")}, []string{"edit", "write"}},
		{"bash deny only", permission.Ruleset{deny(permission.Bash, "*"), allow(permission.Read, "*")}, []string{"glob", "grep", "list", "read"}},
		{"external_directory does not offer read", permission.Ruleset{allow(permission.ExternalDirectory, "/tmp/**")}, []string{}},
		{"bash", permission.Ruleset{allow(permission.Bash, "go test *")}, []string{"bash"}},
		{"all", permission.Ruleset{allow(permission.Read, "*"), allow(permission.Edit, "**"), allow(permission.Bash, "make")},
			[]string{"bash", "edit", "glob", "grep", "list", "read", "write"}},
	}
	builtins := Builtins(Env{WorkTree: t.TempDir()})
	for _, tt := range tests {
		got := Offered(builtins, tt.rules)
		names := []string{}
		for _, tl := range got {
			names = append(names, tl.Info().Name)
		}
		if !slices.Equal(names, tt.want) {
			t.Errorf("%s: offered %v, want %v", tt.name, names, tt.want)
		}
		if tt.name == "all" && !reflect.DeepEqual(got, builtins) {
			t.Errorf("all: the offered tools are not the built-ins themselves")
		}
	}
}

// TestBuiltinsArePermissioners: every built-in names its permission, so
// none is offered by accident under a spec that allows nothing.
func TestBuiltinsArePermissioners(t *testing.T) {
	t.Parallel()
	want := map[string]string{"bash": permission.Bash, "edit": permission.Edit, "write": permission.Edit,
		"glob": permission.Read, "grep": permission.Read, "list": permission.Read, "read": permission.Read}
	for _, tl := range Builtins(Env{WorkTree: t.TempDir()}) {
		p, ok := tl.(Permissioner)
		if !ok || p.Permission() != want[tl.Info().Name] {
			t.Errorf("%s: Permissioner %v, permission %v; want %s", tl.Info().Name, ok, p, want[tl.Info().Name])
		}
	}
}
