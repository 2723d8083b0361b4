package sandbox_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// envProtected is the pipeline's rule in small: a file whose name starts
// with .env is protected.
func envProtected(p string) bool { return strings.HasPrefix(filepath.Base(p), ".env") }

// TestCoversRefreshAttack runs the attack for real under each layer, with
// each launch: command 1 writes a secret into new protected files (one in
// the tree's root, one in a directory it makes, one in a directory that
// was there), command 2 cats them. Command 2 must not see the secret, and
// its Process.Refresh must name the new covers; a third command sees the
// same covers without another refresh. With mode off (the control) the
// attack works.
func TestCoversRefreshAttack(t *testing.T) {
	const write = `mkdir -p conf && echo "SECRET=$0" > .env.local && echo "SECRET=$0" > conf/.env && echo "SECRET=$0" > old/.env.prod && echo made`
	const read = `cat .env.local conf/.env old/.env.prod; echo read`
	wantHidden := []string{".env.local", "conf/.env", "old/.env.prod"}
	for name, layers := range layerSets() {
		for launch, perCommand := range launchSets() {
			t.Run(name+"/"+launch, func(t *testing.T) {
				requireLayers(t, layers)
				secret := "s3cr3t-" + randomHex(t)
				tree := t.TempDir()
				if err := os.Mkdir(filepath.Join(tree, "old"), 0o755); err != nil {
					t.Fatal(err)
				}
				sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, Layers: layers, Protected: envProtected, PerCommandHelper: perCommand})
				if err != nil {
					t.Fatal(err)
				}
				defer sb.Close()
				env := []string{"PATH=" + os.Getenv("PATH")}
				out, code, _, ref := runRefresh(t, sb, []string{"bash", "-c", write, secret}, tree, env)
				if code != 0 || !strings.Contains(out, "made") || ref != nil {
					t.Fatalf("command 1: exit %d, refresh %+v: %s", code, ref, out)
				}
				out, _, _, ref = runRefresh(t, sb, []string{"bash", "-c", read}, tree, env)
				if strings.Contains(out, secret) || !strings.Contains(out, "read") {
					t.Errorf("command 2 read the protected files command 1 made:\n%s", out)
				}
				if ref == nil || !slices.Equal(ref.Hidden, wantHidden) {
					t.Errorf("command 2's refresh is %+v, want one hiding %v", ref, wantHidden)
				}
				if out, _, _, ref = runRefresh(t, sb, []string{"bash", "-c", read}, tree, env); strings.Contains(out, secret) || ref != nil {
					t.Errorf("command 3 (refresh %+v):\n%s", ref, out)
				}
				for _, h := range wantHidden {
					if !slices.Contains(sb.Hidden(), filepath.Join(tree, h)) {
						t.Errorf("Hidden() lacks %s", h)
					}
				}
			})
		}
	}
	t.Run("off", func(t *testing.T) {
		secret := "s3cr3t-" + randomHex(t)
		tree := t.TempDir()
		if err := os.Mkdir(filepath.Join(tree, "old"), 0o755); err != nil {
			t.Fatal(err)
		}
		sb, err := sandbox.New(sandbox.Policy{Mode: sandbox.ModeOff, WorkTree: tree, Protected: envProtected})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		env := []string{"PATH=" + os.Getenv("PATH")}
		runRefresh(t, sb, []string{"bash", "-c", write, secret}, tree, env)
		if out, _, _, _ := runRefresh(t, sb, []string{"bash", "-c", read}, tree, env); strings.Count(out, secret) != 3 {
			t.Errorf("the unsandboxed control did not read the files, the attack test cannot fail:\n%s", out)
		}
	})
}

// TestLandlockListedDirGrantsRefresh: with Landlock only, the work tree's
// root holding a hidden .env has its children granted one by one; what a
// command makes there is readable (and runnable) by the next command,
// while the .env stays hidden.
func TestLandlockListedDirGrantsRefresh(t *testing.T) {
	layers := []sandbox.Layer{sandbox.LayerLandlock}
	requireLayers(t, layers)
	tree := t.TempDir()
	if err := os.WriteFile(filepath.Join(tree, ".env"), []byte("SECRET=hidden-value"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, Layers: layers, Protected: envProtected})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	env := []string{"PATH=" + os.Getenv("PATH")}
	make := `echo built > new.txt && mkdir -p bin && printf '#!/bin/sh\necho ran-tool\n' > bin/tool && chmod +x bin/tool && echo made`
	if out, code, _, _ := runRefresh(t, sb, []string{"bash", "-c", make}, tree, env); code != 0 {
		t.Fatalf("command 1: exit %d: %s", code, out)
	}
	out, code, _, ref := runRefresh(t, sb, []string{"bash", "-c", "cat new.txt && ./bin/tool && cat .env; echo end"}, tree, env)
	if !strings.Contains(out, "built") || !strings.Contains(out, "ran-tool") || strings.Contains(out, "hidden-value") {
		t.Errorf("command 2 (exit %d):\n%s", code, out)
	}
	if ref == nil || len(ref.Hidden) != 0 || !strings.Contains(ref.Reason, "Landlock") {
		t.Errorf("refresh %+v, want one that grants reading the new entries", ref)
	}
}

// runRefresh is runIn that also returns the process's Refresh.
func runRefresh(t *testing.T, sb *sandbox.Sandbox, argv []string, dir string, env []string) (string, int, sandbox.Launch, *sandbox.Refresh) {
	t.Helper()
	var ref *sandbox.Refresh
	out, code, launch := runInWith(t, sb, argv, dir, env, func(p *sandbox.Process) { ref = p.Refresh() })
	return out, code, launch, ref
}
