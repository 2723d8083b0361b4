package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// countingTool records whether it ran; it declares no permission requests.
type countingTool struct{ runs int }

func (c *countingTool) Info() Info { return Info{Name: "webfetch"} }
func (c *countingTool) Run(context.Context, Call) (Result, error) {
	c.runs++
	return Result{Output: "ran"}, nil
}

func TestGuard(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"src/a.go": "package a\n", ".env": "K=v\n", "vendor/v.go": "package v\n", "docs/d.md": "TODO\n"})
	rs := permission.Ruleset{
		{Permission: permission.Read, Pattern: "**", Action: permission.Allow},
		{Permission: permission.Read, Pattern: "docs/**", Action: permission.Deny},
		{Permission: permission.Edit, Pattern: "**", Action: permission.Allow},
		{Permission: permission.Edit, Pattern: "vendor/**", Action: permission.Deny},
		{Permission: permission.Bash, Pattern: "echo *", Action: permission.Allow},
	}
	env := Env{WorkTree: dir, Environ: []string{"PATH=/usr/bin:/bin"}}
	guarded := GuardAll(Builtins(env), rs, dir)
	get := func(name string) Tool {
		tl, ok := Named(guarded, name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		return tl
	}
	tests := []struct {
		tool       string
		input      string
		perm, pat  string
		rule       string // "" = default deny (nil)
		reasonPart string
	}{
		{"write", `{"path":"vendor/v.go","content":"x"}`, "edit", "vendor/v.go", `edit "vendor/**": deny`, "denied by rule"},
		{"edit", `{"path":"../out.txt","old_string":"","new_string":"x"}`, "external_directory", "", "", "outside the work tree"},
		{"read", `{"path":".env"}`, "read", ".env", "", "protected"},
		{"bash", `{"command":"echo hi; rm -rf src"}`, "bash", "rm -rf src", "", "default deny"},
		{"bash", `{"command":"echo hi > vendor/x"}`, "edit", "vendor/x", `edit "vendor/**": deny`, "redirect"},
		{"grep", `{"pattern":"x","path":"docs"}`, "read", "docs", `read "docs/**": deny`, "denied"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.input, func(t *testing.T) {
			res, err := get(tt.tool).Run(t.Context(), Call{Input: json.RawMessage(tt.input)})
			if err != nil {
				t.Fatal(err)
			}
			d := res.Denial
			if !res.IsError || d == nil {
				t.Fatalf("not denied: %+v", res)
			}
			rule := ""
			if d.Rule != nil {
				rule = *d.Rule
			}
			if d.Permission != tt.perm || (tt.pat != "" && d.Pattern != tt.pat) || rule != tt.rule || !strings.Contains(d.Reason, tt.reasonPart) {
				t.Errorf("denial = %+v (rule %q)", d, rule)
			}
			if !strings.Contains(res.Output, "Permission denied") {
				t.Errorf("output = %q", res.Output)
			}
		})
	}
	if got := readFile(t, dir, "vendor/v.go"); got != "package v\n" {
		t.Errorf("denied write ran: %q", got)
	}
	if res := run(t, get("write"), WriteParams{Path: "src/b.go", Content: "package a\n"}); res.IsError || res.Denial != nil {
		t.Errorf("allowed write: %+v", res)
	}
	if res := run(t, get("bash"), BashParams{Command: "echo hi"}); res.IsError || strings.TrimSpace(res.Output) != "hi" {
		t.Errorf("allowed bash: %+v", res)
	}
	// walks do not show what a read would be denied
	res := run(t, get("grep"), GrepParams{Pattern: ".*"})
	if strings.Contains(res.Output, ".env") || strings.Contains(res.Output, "docs/") || !strings.Contains(res.Output, "src/a.go") {
		t.Errorf("guarded grep shows denied files:\n%s", res.Output)
	}
	res = run(t, get("list"), ListParams{})
	if strings.Contains(res.Output, ".env") || strings.Contains(res.Output, "docs") {
		t.Errorf("guarded list shows denied entries:\n%s", res.Output)
	}
	// invalid arguments are an error result, not a Go error
	res, err := get("read").Run(t.Context(), Call{Input: json.RawMessage(`{"path":`)})
	if err != nil || !res.IsError || res.Denial != nil {
		t.Errorf("bad JSON: %+v, %v", res, err)
	}
	// a tool without Requester is checked as its own permission, pattern "*"
	ct := &countingTool{}
	res, err = Guard(ct, rs, dir).Run(t.Context(), Call{Input: json.RawMessage(`{}`)})
	if err != nil || ct.runs != 0 || res.Denial == nil || res.Denial.Permission != "webfetch" || res.Denial.Rule != nil {
		t.Errorf("non-requester: %+v runs=%d", res, ct.runs)
	}
	allow := append(rs, permission.Rule{Permission: "webfetch", Pattern: "*", Action: permission.Allow})
	if res, _ := Guard(ct, allow, dir).Run(t.Context(), Call{}); ct.runs != 1 || res.Output != "ran" {
		t.Errorf("allowed non-requester: %+v", res)
	}
}

// TestGuardBashNamesEveryDeniedPart checks a compound command's denial
// names each denied part, the first three and a count of the rest.
func TestGuardBashNamesEveryDeniedPart(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"README.md": "keep\n"})
	rs := permission.Ruleset{{Permission: permission.Bash, Pattern: "ls *", Action: permission.Allow}}
	bash, ok := Named(GuardAll(Builtins(Env{WorkTree: dir, Environ: []string{"PATH=/usr/bin:/bin"}}), rs, dir), "bash")
	if !ok {
		t.Fatal("no bash")
	}
	tests := []struct {
		command   string
		want, not []string
	}{
		{"echo hi && rm -f README.md", []string{`"echo hi"`, `"rm -f README.md"`}, []string{"more denied"}},
		{"ls && echo a && echo b && rm -f README.md && touch c && mv x y",
			[]string{`"echo a"`, `"echo b"`, `"rm -f README.md"`, "; and ", "more denied part(s)"}, []string{`"touch c"`, `"ls"`}},
	}
	for _, tt := range tests {
		res := run(t, bash, BashParams{Command: tt.command})
		if res.Denial == nil {
			t.Fatalf("%s: not denied: %+v", tt.command, res)
		}
		for _, w := range tt.want {
			if !strings.Contains(res.Output, w) {
				t.Errorf("%s: denial does not name %s:\n%s", tt.command, w, res.Output)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(res.Output, n) {
				t.Errorf("%s: denial names %s:\n%s", tt.command, n, res.Output)
			}
		}
	}
	if got := readFile(t, dir, "README.md"); got != "keep\n" {
		t.Errorf("denied rm ran: README.md = %q", got)
	}
}
