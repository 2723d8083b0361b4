package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestAttackRecursiveWalk runs `grep -r ” .`, which reads .env without
// naming it, through the guarded bash tool. Where the sandbox hides .env
// the command is allowed and prints no secret; with mode off, or no
// sandbox, the guard refuses it. The control runs it unguarded with mode
// off: the secret is printed.
func TestAttackRecursiveWalk(t *testing.T) {
	t.Parallel()
	const secret = "walk-secret-7c1"
	rules := permission.Ruleset{
		{Permission: permission.Bash, Pattern: "*", Action: permission.Allow},
		{Permission: permission.Read, Pattern: "**", Action: permission.Allow},
	}
	modes := map[string]*sandbox.Policy{"none": nil, "off": {Mode: sandbox.ModeOff}, "auto": {Mode: sandbox.ModeAuto}}
	for name, pol := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := bashEnv(t)
			for p, content := range map[string]string{".env": "TOKEN=" + secret + "\n", "src/a.go": "package a\n"} {
				full := filepath.Join(env.WorkTree, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if pol != nil {
				pol.WorkTree = env.WorkTree
				pol.Protected = func(p string) bool { return filepath.Base(p) == ".env" }
				sb, err := sandbox.New(*pol)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = sb.Close() })
				if sb.Err() != nil {
					t.Skipf("no sandbox layer on this machine: %v", sb.Err())
				}
				env.Sandbox = sb
			}
			hidden := name == "auto"
			if hidden && len(env.Sandbox.Layers()) == 0 {
				t.Skip("no sandbox layer on this machine")
			}
			res := run(t, Guard(tool(t, env, "bash"), rules, env.WorkTree), BashParams{Command: "grep -r '' ."})
			switch {
			case strings.Contains(res.Output, secret):
				t.Fatalf("the secret was printed: %q", res.Output)
			case hidden && res.Denial != nil:
				t.Fatalf("denied although the sandbox hides .env: %s", res.Denial.Reason)
			case hidden && !strings.Contains(res.Output, "package a"):
				t.Fatalf("the walk did not run: %q", res.Output)
			case !hidden && (res.Denial == nil || !strings.Contains(res.Denial.Reason, "walks . and reads .env")):
				t.Fatalf("a walk reading .env with the sandbox %s was not refused: %+v %q", name, res.Denial, res.Output)
			}
			if name == "off" { // control: the guard is what stands between the walk and the secret
				if out := run(t, tool(t, env, "bash"), BashParams{Command: "grep -r '' ."}); !strings.Contains(out.Output, secret) {
					t.Fatalf("control: unguarded, the walk printed no secret: %q", out.Output)
				}
			}
		})
	}
}
