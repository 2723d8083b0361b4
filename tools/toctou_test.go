package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// TestToolsActOnTheCheckedFile: a path is judged once, by Guard; if a
// symlink replaces a part of it before the tool runs, the tool neither
// follows it out of the work tree nor re-resolves the raw path.
func TestToolsActOnTheCheckedFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		tool  string
		path  string
		input string
	}{
		{"write, file swapped", "write", "f.txt", `{"path":"f.txt","content":"pwned"}`},
		{"write, parent swapped", "write", "d/f.txt", `{"path":"d/f.txt","content":"pwned"}`},
		{"edit, file swapped", "edit", "f.txt", `{"path":"f.txt","old_string":"secret","new_string":"pwned"}`},
		{"edit, parent swapped", "edit", "d/f.txt", `{"path":"d/f.txt","old_string":"secret","new_string":"pwned"}`},
		{"read, file swapped", "read", "f.txt", `{"path":"f.txt"}`},
		{"read, parent swapped", "read", "d/f.txt", `{"path":"d/f.txt"}`},
		{"grep, file swapped", "grep", "f.txt", `{"pattern":"secret","path":"f.txt"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			wt, outside := filepath.Join(base, "wt"), filepath.Join(base, "outside")
			for _, name := range []string{"wt/f.txt", "wt/d/f.txt", "outside/f.txt"} {
				p := filepath.Join(base, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("secret\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rs := permission.Ruleset{{Permission: permission.Read, Pattern: "**", Action: permission.Allow},
				{Permission: permission.Edit, Pattern: "**", Action: permission.Allow}}
			paths, err := permission.NewPaths(wt)
			if err != nil {
				t.Fatal(err)
			}
			d, target := paths.Check(rs, permission.Edit, tt.path)
			if !d.Allowed || !target.Inside {
				t.Fatalf("check: %+v", d)
			}
			// the swap, after the check: the file or its directory now leads outside
			swapped := filepath.Join(wt, filepath.FromSlash(tt.path))
			to := filepath.Join(outside, "f.txt")
			if tt.path == "d/f.txt" {
				swapped, to = filepath.Join(wt, "d"), outside
			}
			if err := os.RemoveAll(swapped); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(to, swapped); err != nil {
				t.Fatal(err)
			}
			ctx := withChecked(t.Context(), map[string]permission.Target{tt.path: target})
			res, err := tool(t, Env{WorkTree: wt}, tt.tool).Run(ctx, Call{ID: "c", Input: json.RawMessage(tt.input)})
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, outside, "f.txt"); got != "secret\n" {
				t.Errorf("the file outside was written: %q", got)
			}
			if !res.IsError && (tt.tool == "read" || tt.tool == "grep") {
				t.Errorf("%s read through the swapped symlink: %s", tt.tool, res.Output)
			}
		})
	}
}

// TestWriteRefusesHardLinks: a file linked from outside the work tree is
// not written through.
func TestWriteRefusesHardLinks(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	wt := filepath.Join(base, "wt")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "gitconfig")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(wt, "g")); err != nil {
		t.Fatal(err)
	}
	env := Env{WorkTree: wt}
	for _, tt := range []struct{ tool, input string }{
		{"write", `{"path":"g","content":"pwned"}`},
		{"edit", `{"path":"g","old_string":"secret","new_string":"pwned"}`},
	} {
		res := run(t, tool(t, env, tt.tool), json.RawMessage(tt.input))
		if !res.IsError || !strings.Contains(res.Output, "hard links") {
			t.Errorf("%s: %+v", tt.tool, res)
		}
	}
	if got := readFile(t, base, "gitconfig"); got != "secret\n" {
		t.Errorf("written through the hard link: %q", got)
	}
}
