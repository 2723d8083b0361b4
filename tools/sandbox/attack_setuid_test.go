package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSetuidBitsRefused: a command makes files setuid or setgid, outside
// the tree (with Landlock only the file system is not read-only and
// Landlock has no right for chmod: chmod u+s of a file the runner's user
// owns worked, and as root that is /usr/bin/python3) and in the tree
// (the bit stays after the run, where no_new_privs no longer holds), by
// chmod, open(O_CREAT) with the mode, mknod and install -m. Under every
// layer none gets the bit (the seccomp filter refuses the mode with
// EPERM); plain modes still work. Mode off is the control.
func TestSetuidBitsRefused(t *testing.T) {
	sets := layerSets()
	sets["off"] = nil
	for name, layers := range sets {
		t.Run(name, func(t *testing.T) {
			requireTool(t, "python3")
			sb, tree := zygoteSandbox(t, layers)
			outside := filepath.Join(t.TempDir(), "tool")
			if err := os.WriteFile(outside, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(tree, "inside"), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			script := "chmod 4755 " + outside + "; chmod u+s inside; " +
				`python3 -c 'import os, stat; os.close(os.open("created", os.O_CREAT | os.O_WRONLY, 0o4755)); os.mknod("node", stat.S_IFREG | 0o2755)'; ` +
				"install -m 6755 inside installed; chmod 0750 plain 2>/dev/null; touch plain && chmod 0750 plain; true"
			if out, code, _ := runIn(t, t.Context(), sb, []string{"bash", "-c", script}, tree, pathEnv()); code != 0 {
				t.Fatalf("the command: %q exit %d", out, code)
			}
			for _, f := range []string{outside, filepath.Join(tree, "inside"), filepath.Join(tree, "created"), filepath.Join(tree, "node"), filepath.Join(tree, "installed")} {
				fi, err := os.Stat(f)
				if err != nil {
					if layers == nil {
						t.Errorf("the control made no %s: %v", f, err)
					}
					continue // refused at creation
				}
				bits := fi.Mode() & (os.ModeSetuid | os.ModeSetgid)
				if want := layers == nil; (bits != 0) != want {
					t.Errorf("%s has mode %v: setuid/setgid set = %v, want %v (only with the sandbox off)", f, fi.Mode(), bits != 0, want)
				}
			}
			if fi, err := os.Stat(filepath.Join(tree, "plain")); err != nil || fi.Mode().Perm() != 0o750 {
				t.Errorf("a plain chmod 0750 in the tree did not work: %v %v", fi, err)
			}
		})
	}
}
