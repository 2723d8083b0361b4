package permission

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzPathContainment: whatever the input, an allowed path (no external
// rule) resolves inside the work tree even when the OS follows every
// symlink, and is neither in .git nor an .env file.
func FuzzPathContainment(f *testing.F) {
	seeds := []string{"src/a.go", "../x", "link-out/x.txt", "link-out/../x", "/etc/passwd", ".git/config",
		"src/../../x", "./.env", "a/./b//c", "dangling", "loop/x", "src-link/../../x", "\x00", ""}
	for _, s := range seeds {
		f.Add(s)
	}
	root := f.TempDir()
	wt := filepath.Join(root, "wt")
	for _, d := range []string{"wt/src", "wt/.git", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for name, target := range map[string]string{"link-out": "../outside", "dangling": "../outside/nope",
		"loop": "loop", "src-link": "src", "up": ".."} {
		if err := os.Symlink(target, filepath.Join(wt, name)); err != nil {
			f.Fatal(err)
		}
	}
	p, err := NewPaths(wt)
	if err != nil {
		f.Fatal(err)
	}
	rs := Ruleset{{Read, "**", Allow}, {Edit, "**", Allow}}
	f.Fuzz(func(t *testing.T, name string) {
		d, target := p.Check(rs, Edit, name)
		if !d.Allowed {
			return
		}
		if !target.Inside || ProtectedKind(target.Rel) != "" {
			t.Fatalf("%q allowed as %+v", name, target)
		}
		if real := osResolve(target.Abs); !strings.HasPrefix(real+"/", p.Root()+"/") {
			t.Fatalf("%q allowed but the OS resolves %s to %s", name, target.Abs, real)
		}
	})
}

// osResolve follows symlinks the way the OS would for the longest existing
// prefix of abs.
func osResolve(abs string) string {
	rest := ""
	cur := abs
	for {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
