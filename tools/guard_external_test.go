package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// TestGuardBashExternalDirectory replays a first user's trial: with
// `bash: {"*": allow}` and no external_directory rule, commands whose
// arguments name files outside the work tree do not run; a rule for the
// directory lets them.
func TestGuardBashExternalDirectory(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	wt := filepath.Join(base, "wt")
	victim := filepath.Join(base, "victim")
	for _, d := range []string{filepath.Join(wt, "src"), victim} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(victim, "keep.txt"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	broad := permission.Ruleset{
		{Permission: permission.Bash, Pattern: "*", Action: permission.Allow},
		{Permission: permission.Edit, Pattern: "**", Action: permission.Allow},
	}
	env := Env{WorkTree: wt, Environ: []string{"PATH=/usr/bin:/bin"}}
	bash := func(rs permission.Ruleset) Tool {
		tl, _ := Named(GuardAll(Builtins(env), rs, wt), "bash")
		return tl
	}
	for _, cmd := range []string{
		"rm -rf " + victim,
		"cat " + filepath.Join(victim, "keep.txt") + " > leak.txt",
		"cd src && rm -rf ../../victim",
	} {
		res := run(t, bash(broad), BashParams{Command: cmd})
		if res.Denial == nil || res.Denial.Permission != permission.ExternalDirectory {
			t.Errorf("%q: not denied by external_directory: %+v", cmd, res)
		}
	}
	if _, err := os.Stat(filepath.Join(victim, "keep.txt")); err != nil {
		t.Fatalf("a denied command ran: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wt, "leak.txt")); !os.IsNotExist(err) {
		t.Errorf("leak.txt was written: %v", err)
	}
	real, err := filepath.EvalSymlinks(victim)
	if err != nil {
		t.Fatal(err)
	}
	allowed := append(broad, permission.Rule{Permission: permission.ExternalDirectory,
		Pattern: filepath.ToSlash(real) + "/**", Action: permission.Allow})
	res := run(t, bash(allowed), BashParams{Command: "cat " + filepath.Join(victim, "keep.txt")})
	if res.IsError || strings.TrimSpace(res.Output) != "secret" {
		t.Errorf("allowed by an external_directory rule, got %+v", res)
	}
}
