package pipeline

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/internal/safefs"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// The attacks on the snapshots and the ignored-files scan: after a
// command, the runner records the work tree (each step's snapshot and
// the final one from what inotify saw, the scan of ignored files)
// outside every sandbox. A command writes a file where the runner will
// look, then swaps the file, its directory or the directory above for a
// symlink to a directory outside the work tree holding a secret of the
// same name. Nothing outside may be read into the store, the patch or
// the log, and nothing outside may change; the link itself is recorded
// as a link. TestAttackSnapshotControl switches the fix off
// (safefs.SetFollowLinks) and sees the secret read.

// snapshotPlant is one place a symlink is planted: the script that
// plants it (outside is the outside directory), the work-tree path the
// runner is led to read, and the link.
type snapshotPlant struct {
	name, script, lure, link string
}

func snapshotPlants() []snapshotPlant {
	return []snapshotPlant{{
		name: "file", lure: "src/secret.txt", link: "src/secret.txt",
		script: "echo mine > src/secret.txt\nrm src/secret.txt\nln -s %[1]s/file src/secret.txt\n",
	}, {
		name: "dir", lure: "src/secret.txt", link: "src",
		script: "echo mine > src/secret.txt\nmv src src.moved\nln -s %[1]s/dir1 src\n",
	}, {
		name: "parent", lure: "lib/src/secret.txt", link: "lib",
		script: "echo mine > lib/src/secret.txt\nmv lib lib.moved\nln -s %[1]s/dir2 lib\n",
	}, {
		// The same under a directory git ignores, for the ignored-files scan.
		name: "ignored-dir", lure: "build/secret.txt", link: "build",
		script: "echo mine > build/secret.txt\nmv build build.moved\nln -s %[1]s/dir1 build\n",
	}}
}

// snapshotSecret is what the outside files hold.
const snapshotSecret = "OUTSIDE-SECRET-7f3a9c"

// snapshotOutcome is what one snapshot attack left.
type snapshotOutcome struct {
	leaks          []string // where the secret was found
	outsideChanged string
	lureListed     bool // a patch event or the ignored list names the lure, which lies behind the link
}

func runSnapshotAttack(t *testing.T, p snapshotPlant, pin string) snapshotOutcome {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	outside := t.TempDir()
	for _, f := range []string{"file", "dir1/secret.txt", "dir2/src/secret.txt"} {
		mustWrite(t, filepath.Join(outside, f), snapshotSecret+"\n")
	}
	before := outsideState(t, outside)
	files := map[string]string{
		"Makefile": "all:\n\tsh attack.sh\n", "attack.sh": fmt.Sprintf(p.script, outside) + "ls -la . src lib || true\n",
		"src/a.go": "package a\n", "lib/src/b.go": "package b\n", ".gitignore": "build/\n",
	}
	repo := gittest.Repo(t, files)
	mustWrite(t, filepath.Join(repo, "build", "old.o"), "old\n")
	run := testRun{spec: gateSpec, repo: repo, replies: []llmtest.Reply{makeTurn(), llmtest.Turn{Text: "Built."}.Reply()}, noLog: true}.sandboxed(pin).exec(t)
	out, runErr := run.out, run.err
	var res snapshotOutcome
	if after := outsideState(t, outside); !statesEqual(before, after) {
		res.outsideChanged = diffStates(before, after)
	}
	res.leaks = findSecret(t, snapshotSecret, out, cache)
	if data, err := os.ReadFile(filepath.Join(out, "events.jsonl")); err == nil {
		recs, _ := event.ReadLog(bytes.NewReader(data))
		for _, r := range recs {
			switch r.Type {
			case "patch":
				var pe event.Patch
				if p.link != p.lure && r.Decode(&pe) == nil && (slices.ContainsFunc(pe.Files, func(f event.FileChange) bool { return f.Path == p.lure }) ||
					pe.IgnoredWritten != nil && slices.Contains(pe.IgnoredWritten.Paths, p.lure)) {
					res.lureListed = true
				}
			}
		}
	}
	t.Logf("%s under %s: leaks %q, outside changed %q, lure listed %v, error %v, stderr:\n%s",
		p.name, pin, res.leaks, res.outsideChanged, res.lureListed, runErr, run.stderr)
	return res
}

// findSecret looks for secret in every file below dirs, as written and,
// for what inflates (loose git objects), inflated.
func findSecret(t *testing.T, secret string, dirs ...string) []string {
	t.Helper()
	var found []string
	for _, dir := range dirs {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			if bytes.Contains(data, []byte(secret)) {
				found = append(found, p)
				return nil
			}
			if zr, err := zlib.NewReader(bytes.NewReader(data)); err == nil {
				if plain, _ := io.ReadAll(zr); bytes.Contains(plain, []byte(secret)) {
					found = append(found, p+" (inflated)")
				}
			}
			return nil
		})
	}
	return found
}

func TestAttackSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real bash under each layer set (-short)")
	}
	for _, p := range snapshotPlants() {
		for _, pin := range repairPins() {
			t.Run(p.name+"/"+pin, func(t *testing.T) {
				skipUnavailable(t, pin)
				res := runSnapshotAttack(t, p, pin)
				if len(res.leaks) > 0 {
					t.Errorf("a file outside the work tree was read into the run's outputs or store: %q", res.leaks)
				}
				if res.lureListed {
					t.Errorf("a patch event or the ignored list names %s, read through the link %s", p.lure, p.link)
				}
				if res.outsideChanged != "" {
					t.Errorf("files outside the work tree changed: %s", res.outsideChanged)
				}
			})
		}
	}
}

// TestAttackSnapshotControl runs the attacks with the fix switched off:
// some plant reads the outside secret, so TestAttackSnapshot can fail.
func TestAttackSnapshotControl(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real bash (-short)")
	}
	pin := "landlock"
	if !slices.Contains(sandbox.Probe().Available(), sandbox.LayerLandlock) {
		pin = "off"
	}
	safefs.SetFollowLinks(true)
	defer safefs.SetFollowLinks(false)
	var hit []string
	for _, p := range snapshotPlants() {
		if res := runSnapshotAttack(t, p, pin); len(res.leaks) > 0 || res.lureListed {
			hit = append(hit, p.name+": "+strings.Join(res.leaks, ", "))
		}
	}
	if len(hit) == 0 {
		t.Errorf("with the fix off no plant read the outside secret: TestAttackSnapshot proves nothing")
	}
	t.Logf("with the fix off: %q", hit)
}
