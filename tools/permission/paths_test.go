package permission

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestPathsCheck(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	outside := filepath.Join(filepath.Dir(wt), "outside")
	if err := os.Symlink(filepath.Join(outside, "nope.txt"), filepath.Join(wt, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src", filepath.Join(wt, "src-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(wt, "env-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop", filepath.Join(wt, "loop")); err != nil {
		t.Fatal(err)
	}
	all := Ruleset{{Read, "**", Allow}, {Edit, "**", Allow}}
	ext := append(Ruleset{{ExternalDirectory, filepath.ToSlash(outside) + "/**", Allow}}, all...)
	tests := []struct {
		name  string
		rules Ruleset
		perm  string
		path  string
		want  bool
	}{
		{"dangling symlink to outside", all, Edit, "dangling", false},
		{"symlink inside", all, Edit, "src-link/a.go", true},
		{"symlink inside to vendor", Ruleset{{Edit, "src/**", Allow}}, Edit, "src-link/../vendor/m/m.go", false},
		{"symlink to .env", all, Read, "env-link", false},
		{"symlink loop", all, Read, "loop/x", false},
		{"root", all, Read, ".", true},
		{"root abs", all, Read, wt, true},
		{"dot slash", all, Read, "./src/a.go", true},
		{"nested .git", all, Read, "vendor/m/.git/config", false},
		{".git itself", all, Read, ".git", false},
		{".GIT other case", all, Edit, ".GIT/config", false},
		{".ENV other case", all, Read, ".ENV", false},
		{".github is fine", all, Edit, ".github/workflows/x.yml", true},
		{".env.production", all, Read, "config/.env.production", false},
		{".envrc", all, Read, ".envrc", false},
		{"environment.go is fine", all, Read, "src/environment.go", true},
		{".git named explicitly", Ruleset{{Read, ".git/**", Allow}}, Read, ".git/config", true},
		{".env named explicitly", Ruleset{{Read, "**/.env*", Allow}}, Read, "config/.env.production", true},
		{".env named but denied", Ruleset{{Read, ".env", Allow}, {Read, "**", Deny}}, Read, ".env", false},
		{"external allowed", ext, Read, "link-out/x.txt", true},
		{"external allowed, edit still checked", append(Ruleset{{ExternalDirectory, "**", Allow}}, Ruleset{{Edit, "src/**", Allow}}...), Edit, "link-out/x.txt", false},
		{"external other dir", ext, Read, "/etc/hosts", false},
		{".runner out dir", all, Edit, ".runner/runs/X/changes.patch", false},
		{".runner read", all, Read, ".runner/runs/X/history.jsonl", false},
		{".runner itself", all, Edit, ".runner", false},
		{".Runner other case, nested", all, Edit, "sub/.Runner/runs/forged.txt", false},
		{".runner named explicitly", Ruleset{{Edit, ".runner/**", Allow}}, Edit, ".runner/runs/forged.txt", false},
		{".runnerrc is fine", all, Edit, ".runnerrc", true},
		{"tab in name", all, Edit, "src/a\tb.go", true},
		{"whitespace only", all, Read, "  ", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := CheckPath(tt.rules, wt, tt.perm, tt.path)
			if d.Allowed != tt.want {
				t.Errorf("CheckPath(%s %q) = %v, want %v: %s", tt.perm, tt.path, d.Allowed, tt.want, d.Reason)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	wt := caseTree(t)
	p, err := NewPaths(wt)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Resolve("src//x/../a.go")
	if err != nil || got.Rel != "src/a.go" || !got.Inside || got.Abs != filepath.Join(p.Root(), "src", "a.go") {
		t.Errorf("Resolve = %+v, %v", got, err)
	}
	got, err = p.Resolve("link-out/x.txt")
	if err != nil || got.Inside || got.Abs != filepath.Join(filepath.Dir(p.Root()), "outside", "x.txt") {
		t.Errorf("Resolve(link-out/x.txt) = %+v, %v", got, err)
	}
	if _, err := p.Resolve(""); !errors.Is(err, ErrEmptyPath) {
		t.Errorf("empty: %v", err)
	}
	if _, err := p.Resolve("a\x00b"); !errors.Is(err, ErrNULByte) {
		t.Errorf("NUL: %v", err)
	}
	// a work tree reached through a symlink is the same tree
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(wt, alias); err != nil {
		t.Fatal(err)
	}
	d := CheckPath(Ruleset{{Edit, "src/**", Allow}}, alias, Edit, filepath.Join(wt, "src", "a.go"))
	if !d.Allowed {
		t.Errorf("through alias: %s", d.Reason)
	}
}

// TestCaseFolding: on a file system that folds case, .GITHUB/x is
// .github/x, so an edit deny rule for .github/** covers it. Linux file
// systems here do not fold, so detection is shown with a flipped-case
// symlink (the lookup a folding file system does) and the rules with the
// flag set.
func TestCaseFolding(t *testing.T) {
	t.Parallel()
	plain := t.TempDir()
	if err := os.Mkdir(filepath.Join(plain, "Src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if caseFolds(plain) {
		t.Fatalf("%s detected as folding case", plain)
	}
	folding := t.TempDir()
	if err := os.Mkdir(filepath.Join(folding, "Src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("Src", filepath.Join(folding, "sRC")); err != nil {
		t.Fatal(err)
	}
	if !caseFolds(folding) {
		t.Fatalf("%s not detected as folding case", folding)
	}
	rs := Ruleset{{Permission: Edit, Pattern: "**", Action: Allow}, {Permission: Edit, Pattern: ".github/**", Action: Deny}}
	p, err := NewPaths(plain)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := p.Check(rs, Edit, ".GITHUB/workflows/ci.yml"); !d.Allowed {
		t.Errorf("case-sensitive tree: .GITHUB is another directory, want allowed: %s", d.Reason)
	}
	p.fold = true
	if d, _ := p.Check(rs, Edit, ".GITHUB/workflows/ci.yml"); d.Allowed {
		t.Errorf("folding tree: .GITHUB is .github, want denied")
	}
	if d, _ := p.Check(rs, Edit, "Src/A.go"); !d.Allowed {
		t.Errorf("folding tree: Src/A.go denied: %s", d.Reason)
	}
}

// TestEnvTemplatesAreOrdinaryFiles: committed .env templates (.env.example
// and friends) are not protected (rules decide, as for any file), every
// other .env* file still is, whatever its case.
func TestEnvTemplatesAreOrdinaryFiles(t *testing.T) {
	for rel, want := range map[string]string{
		".env.example": "", "config/.env.sample": "", ".ENV.Template": "", ".env.local.dist": "", ".env.production.example": "",
		".env": ".env", ".env.local": ".env", ".env.example.local": ".env", ".envrc": ".env", "a/.env.examples": ".env",
		".git/config": ".git",
	} {
		if got := ProtectedKind(rel); got != want {
			t.Errorf("ProtectedKind(%q) = %q, want %q", rel, got, want)
		}
	}
	wt := t.TempDir()
	rs := Ruleset{{Permission: Read, Pattern: "**", Action: Allow}}
	if d := CheckPath(rs, wt, Read, ".env.example"); !d.Allowed {
		t.Errorf("read .env.example under **: allow: %+v", d)
	}
	if d := CheckPath(rs, wt, Read, ".env"); d.Allowed {
		t.Errorf("read .env under **: allow: %+v, want the built-in protection", d)
	}
	deny := append(rs, Rule{Permission: Read, Pattern: ".env.example", Action: Deny})
	if d := CheckPath(deny, wt, Read, ".env.example"); d.Allowed {
		t.Errorf("a rule denying .env.example: %+v", d)
	}
}
