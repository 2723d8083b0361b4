package pipeline

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/tools"
)

// TestBuiltinsOfferedByPermission: the model is offered only the built-in
// tools whose permission the spec allows somewhere (as MCP tools are only
// offered under an allow rule); a spec that allows read, edit and bash is
// offered every built-in with the definitions and system prompt as before;
// a spec that allows none gets no tools and no tool guidance.
func TestBuiltinsOfferedByPermission(t *testing.T) {
	tests := []struct {
		name, perms string
		want        []string
	}{
		{"read only", "  read: allow\n", []string{"glob", "grep", "list", "read"}},
		{"edit and bash", "  edit: {\"**\": allow}\n  bash: {\"git status\": allow}\n", []string{"bash", "edit", "write"}},
		{"all", "  read: allow\n  edit: {\"**\": allow}\n  bash: {\"git status\": allow}\n",
			[]string{"bash", "edit", "glob", "grep", "list", "read", "write"}},
		{"none", "  webfetch: allow\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			spec := filepath.Join(t.TempDir(), "task.yaml")
			mustWrite(t, spec, "version: 1\nname: unit\nmodel: gpt-4.1-mini\nprompt: Say hi.\npermissions:\n"+tt.perms)
			repo := filepath.Join(t.TempDir(), "repo")
			mustWrite(t, filepath.Join(repo, "README"), "unit\n")
			srv := newModel(t, llmtest.Turn{Text: "Hi."}.Reply())
			var buf bytes.Buffer
			if _, err := Exec(t.Context(), ExecOptions{Task: spec, Repo: repo, Out: filepath.Join(t.TempDir(), "o"), BaseURL: srv.URL(),
				APIKey: testKey, Quiet: true, Stdout: &buf, Stderr: &buf}); err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			req := srv.Requests()[0]
			var body struct {
				Tools []struct {
					Function struct {
						Name        string          `json:"name"`
						Description string          `json:"description"`
						Parameters  json.RawMessage `json:"parameters"`
					} `json:"function"`
				} `json:"tools"`
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(req.Raw, &body); err != nil {
				t.Fatal(err)
			}
			var names []string
			builtins := tools.Builtins(tools.Env{WorkTree: repo})
			for _, tl := range body.Tools {
				names = append(names, tl.Function.Name)
				b, ok := tools.Named(builtins, tl.Function.Name)
				if !ok || b.Info().Description != tl.Function.Description || !jsonEqual(b.Info().Parameters, tl.Function.Parameters) {
					t.Errorf("%s: the definition sent differs from the built-in's", tl.Function.Name)
				}
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("offered %v, want %v", names, tt.want)
			}
			guidance := strings.Contains(body.Messages[0].Content, "# Using tools")
			if guidance != (len(tt.want) > 0) {
				t.Errorf("system prompt has the tool guidance: %v, with %d tools", guidance, len(tt.want))
			}
		})
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return bytes.Equal(ax, by)
}
