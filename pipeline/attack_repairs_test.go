package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/internal/safefs"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// The attacks on the runner's repairs: a command plants a symlink where
// a repair writes (as the file, as its directory, as the directory
// above), pointing out of the work tree; the repair runs outside every
// sandbox, as the runner's user. After the run nothing outside the work
// tree changed, the symlink is gone or a gate names it, and `git status`
// and `git checkout` on the host run nothing the command planted
// (core.fsmonitor, a post-checkout hook). Each runs under every layer
// set and with the sandbox off; TestAttackRepairsControl runs them with
// the fix switched off (safefs.SetFollowLinks) and sees the outside
// change.

// repairTarget is where one repair writes: a work-tree-relative path of
// at least three components, with what the run needs to reach it.
type repairTarget struct {
	repair string
	target string                                  // where the repair writes
	files  map[string]string                       // committed files besides the Makefile and attack.sh
	before func(t *testing.T, repo string)         // after the commit, before the run
	opts   func(repo string, o *ExecOptions)       // out dir, log path, spec path
	log    func(repo string, o ExecOptions) string // the event log to read back
}

func repairTargets() []repairTarget {
	outLog := func(_ string, o ExecOptions) string { return filepath.Join(o.Out, "events.jsonl") }
	return []repairTarget{{
		// The .git tripwire puts hooks back: .git/hooks/pre-commit.
		repair: "tripwire", target: ".git/hooks/pre-commit",
		before: func(t *testing.T, repo string) {
			t.Helper()
			mustWrite(t, filepath.Join(repo, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n")
		},
		log: outLog,
	}, {
		// The task spec in the work tree is put back.
		repair: "task-spec", target: "ci/tasks/task.yaml",
		files: map[string]string{"ci/tasks/task.yaml": gateSpec},
		opts:  func(repo string, o *ExecOptions) { o.Task = filepath.Join(repo, "ci", "tasks", "task.yaml") },
		log:   outLog,
	}, {
		// Earlier runs' records under .runner are put back.
		repair: "state", target: ".runner/runs/old/result.json",
		files: map[string]string{".gitignore": ".runner/\n"},
		before: func(t *testing.T, repo string) {
			t.Helper()
			mustWrite(t, filepath.Join(repo, ".runner", "runs", "old", "result.json"), `{"status":"success"}`+"\n")
		},
		log: outLog,
	}, {
		// The run's own log in the work tree is put back from its mirror.
		repair: "out-mirror", target: "logs/run/events.jsonl",
		files: map[string]string{".gitignore": "logs/\n"},
		opts:  func(repo string, o *ExecOptions) { o.Events = filepath.Join(repo, "logs", "run", "events.jsonl") },
		log:   func(_ string, o ExecOptions) string { return o.Events },
	}, {
		// The modes of the out dir and what it holds are put back.
		repair: "modes", target: ".runner/runs/cur/result.json",
		files: map[string]string{".gitignore": ".runner/\n"},
		opts:  func(repo string, o *ExecOptions) { o.Out = filepath.Join(repo, ".runner", "runs", "cur") },
		log:   outLog,
	}, {
		// The final patch, the summary and the history are written into an
		// out dir in the work tree after the commands.
		repair: "out-patch", target: ".runner/runs/cur/changes.patch",
		files: map[string]string{".gitignore": ".runner/\n"},
		opts:  func(repo string, o *ExecOptions) { o.Out = filepath.Join(repo, ".runner", "runs", "cur") },
		log:   outLog,
	}, {
		repair: "out-summary", target: ".runner/runs/cur/summary.md",
		files: map[string]string{".gitignore": ".runner/\n"},
		opts:  func(repo string, o *ExecOptions) { o.Out = filepath.Join(repo, ".runner", "runs", "cur") },
		log:   outLog,
	}, {
		repair: "out-history", target: ".runner/runs/cur/history.jsonl",
		files: map[string]string{".gitignore": ".runner/\n"},
		opts:  func(repo string, o *ExecOptions) { o.Out = filepath.Join(repo, ".runner", "runs", "cur") },
		log:   outLog,
	}, {
		// --patch names a file in the work tree, outside the out dir.
		repair: "patch-flag", target: "build/patches/changes.patch",
		files: map[string]string{".gitignore": "build/\n"},
		opts:  func(repo string, o *ExecOptions) { o.Patch = filepath.Join(repo, "build", "patches", "changes.patch") },
		log:   outLog,
	}, {
		// --record writes the cassette into the work tree.
		repair: "cassette", target: "build/rec/cassette.json",
		files: map[string]string{".gitignore": "build/\n"},
		opts:  func(repo string, o *ExecOptions) { o.Record = filepath.Join(repo, "build", "rec", "cassette.json") },
		log:   outLog,
	}}
}

// plants are the places a symlink is planted: the target itself, its
// directory, the directory above.
func plants() []string { return []string{"file", "dir", "parent"} }

// linkOf is the work-tree-relative path the plant replaces with a link,
// and the outside path it points to.
func linkOf(target, plant, outside string) (link, to string) {
	switch plant {
	case "file":
		return target, filepath.Join(outside, "file")
	case "dir":
		return path.Dir(target), filepath.Join(outside, "dir1")
	default:
		return path.Dir(path.Dir(target)), filepath.Join(outside, "dir2")
	}
}

// makeOutside lays out the outside directory for target: file (the
// victim of the file plant), dir1/<name> and dir2/<dir>/<name>, the
// directories 0700 and the files 0000 (a mode repair would change
// them), and returns its state.
func makeOutside(t *testing.T, target string) (string, map[string]string) {
	t.Helper()
	outside := t.TempDir()
	name, dir := path.Base(target), path.Base(path.Dir(target))
	for _, f := range []string{"file", filepath.Join("dir1", name), filepath.Join("dir2", dir, name)} {
		mustWrite(t, filepath.Join(outside, f), "outside victim\n")
		if err := os.Chmod(filepath.Join(outside, f), 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"dir1", "dir2", filepath.Join("dir2", dir)} {
		if err := os.Chmod(filepath.Join(outside, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return outside, outsideState(t, outside)
}

// outsideState is every path below dir with its type, mode and bytes.
func outsideState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		data := []byte{}
		if fi.Mode().IsRegular() {
			if data, err = os.ReadFile(p); err != nil {
				return err
			}
			data = append(data, fmt.Sprintf(" (%d bytes)", len(data))...)
		}
		out[p] = fmt.Sprintf("%v %q", fi.Mode(), data[:min(len(data), 40)])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// attackScript plants core.fsmonitor and a post-checkout hook where it
// can (both would touch mark), then moves link aside and puts a symlink
// to to in its place.
func attackScript(link, to, mark string) string {
	return fmt.Sprintf(`git config core.fsmonitor 'touch %[3]s' 2>/dev/null
printf '#!/bin/sh\ntouch %[3]s\n' > .git/hooks/post-checkout 2>/dev/null && chmod +x .git/hooks/post-checkout
mv %[1]s %[1]s.moved 2>/dev/null || rm -rf %[1]s
ln -s %[2]s %[1]s
ls -la %[1]s
exit 0
`, link, to, mark)
}

// repairOutcome is what one attack left.
type repairOutcome struct {
	outsideChanged string // "" when nothing outside changed, else a description
	linkLeft       bool   // the planted link is still a symlink
	named          bool   // a gate.failed (or the run's error) names the link
	marked         bool   // git status/checkout on the host ran the planted program
	gates          []event.GateFailed
}

// runRepairAttack runs one attack under pin ("off": the sandbox off).
func runRepairAttack(t *testing.T, rt repairTarget, plant, pin string) repairOutcome {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	outside, before := makeOutside(t, rt.target)
	mark := filepath.Join(t.TempDir(), "planted-program-ran")
	link, to := linkOf(rt.target, plant, outside)
	files := map[string]string{"Makefile": "all:\n\tsh attack.sh\n", "attack.sh": attackScript(link, to, mark)}
	for k, v := range rt.files {
		files[k] = v
	}
	repo := gittest.Repo(t, files)
	if rt.before != nil {
		rt.before(t, repo)
	}
	c := testRun{spec: gateSpec, repo: repo, replies: []llmtest.Reply{makeTurn(), llmtest.Turn{Text: "Built."}.Reply()},
		noLog: true}.sandboxed(pin) // the log may lie elsewhere (rt.log) or be cut short
	if rt.repair == "task-spec" && pin == "off" {
		mustWrite(t, filepath.Join(repo, "ci", "tasks", "task.yaml"), c.spec)
		gittest.Run(t, repo, "commit", "-qam", "spec")
	}
	var o ExecOptions
	c.opts = func(eo *ExecOptions) {
		if rt.opts != nil {
			rt.opts(repo, eo)
		}
		o = *eo
	}
	run := c.exec(t)
	runErr := run.err
	var res repairOutcome
	if after := outsideState(t, outside); !statesEqual(before, after) {
		res.outsideChanged = diffStates(before, after)
	}
	if fi, err := os.Lstat(filepath.Join(repo, filepath.FromSlash(link))); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		res.linkLeft = true
	}
	if data, err := os.ReadFile(rt.log(repo, o)); err == nil {
		if recs, err := event.ReadLog(bytes.NewReader(data)); err == nil {
			res.gates, _ = gatesOfQuiet(recs)
		}
	}
	for _, g := range res.gates {
		if slices.ContainsFunc(g.Paths, func(p string) bool { return p == link || strings.HasPrefix(p, link+"/") }) ||
			strings.Contains(g.Message, link) {
			res.named = true
		}
	}
	if runErr != nil && strings.Contains(runErr.Error(), link) {
		res.named = true
	}
	res.marked = hostGitRuns(t, repo, mark)
	t.Logf("%s/%s under %s: outside changed %q, link left %v, named %v, stderr:\n%s", rt.repair, plant, pin,
		res.outsideChanged, res.linkLeft, res.named, run.stderr)
	return res
}

// hostGitRuns runs git status and git checkout in repo as a user would
// after the run and reports whether a planted program touched mark.
func hostGitRuns(t *testing.T, repo, mark string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, args := range [][]string{{"status"}, {"checkout", "-q", "HEAD", "--", "."}} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		_ = cmd.Run() // a repository the repair had to take apart may be none any more
	}
	_, err := os.Stat(mark)
	return err == nil
}

// gatesOfQuiet is gatesOf for a log that may be cut short.
func gatesOfQuiet(recs []event.Record) ([]event.GateFailed, error) {
	var gates []event.GateFailed
	for _, r := range recs {
		if r.Type == "gate.failed" {
			var g event.GateFailed
			if err := r.Decode(&g); err != nil {
				return gates, err
			}
			gates = append(gates, g)
		}
	}
	return gates, nil
}

func statesEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

func diffStates(before, after map[string]string) string {
	var d []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			d = append(d, k+" removed")
		} else if v != w {
			d = append(d, k+": "+v+" → "+w)
		}
	}
	for k, w := range after {
		if _, ok := before[k]; !ok {
			d = append(d, k+" added: "+w)
		}
	}
	slices.Sort(d)
	return strings.Join(d, "; ")
}

// repairPins are the layer sets the attacks run under, "off" the sandbox
// off; a set this kernel lacks is skipped, saying why.
func repairPins() []string { return []string{"namespaces", "landlock", "off"} }

func skipUnavailable(t *testing.T, pin string) {
	t.Helper()
	if pin == "off" {
		return
	}
	sup := sandbox.Probe()
	for _, l := range strings.Split(pin, ",") {
		if !slices.Contains(sup.Available(), sandbox.Layer(l)) {
			t.Skipf("layer %s is not available here: %s", l, sup.Missing())
		}
	}
}

// attackRepair runs every plant of the repair under every layer set.
func attackRepair(t *testing.T, repair string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs real bash under each layer set (-short)")
	}
	i := slices.IndexFunc(repairTargets(), func(rt repairTarget) bool { return rt.repair == repair })
	rt := repairTargets()[i]
	for _, plant := range plants() {
		for _, pin := range repairPins() {
			t.Run(plant+"/"+pin, func(t *testing.T) {
				skipUnavailable(t, pin)
				res := runRepairAttack(t, rt, plant, pin)
				if res.outsideChanged != "" {
					t.Errorf("the repair changed files outside the work tree: %s", res.outsideChanged)
				}
				if res.linkLeft && !res.named {
					t.Errorf("the planted link is still there and no gate names it (gates %+v)", res.gates)
				}
				if res.marked {
					t.Errorf("git status/checkout on the host ran a program the command planted")
				}
			})
		}
	}
}

func TestAttackRepairTripwire(t *testing.T)   { attackRepair(t, "tripwire") }
func TestAttackRepairTaskSpec(t *testing.T)   { attackRepair(t, "task-spec") }
func TestAttackRepairState(t *testing.T)      { attackRepair(t, "state") }
func TestAttackRepairOutMirror(t *testing.T)  { attackRepair(t, "out-mirror") }
func TestAttackRepairModes(t *testing.T)      { attackRepair(t, "modes") }
func TestAttackRepairOutPatch(t *testing.T)   { attackRepair(t, "out-patch") }
func TestAttackRepairOutSummary(t *testing.T) { attackRepair(t, "out-summary") }
func TestAttackRepairOutHistory(t *testing.T) { attackRepair(t, "out-history") }
func TestAttackRepairPatchFlag(t *testing.T)  { attackRepair(t, "patch-flag") }
func TestAttackRepairCassette(t *testing.T)   { attackRepair(t, "cassette") }

// TestAttackRepairsControl runs the attacks with the fix switched off
// (every repair follows symlinks, as plain os calls do): for each repair
// at least one plant changes a file outside the work tree, so the
// attack tests above can fail. Landlock only, the set GitHub's runners
// give, or the sandbox off where Landlock is missing.
func TestAttackRepairsControl(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real bash (-short)")
	}
	pin := "landlock"
	if !slices.Contains(sandbox.Probe().Available(), sandbox.LayerLandlock) {
		pin = "off"
	}
	safefs.SetFollowLinks(true)
	defer safefs.SetFollowLinks(false)
	for _, rt := range repairTargets() {
		t.Run(rt.repair, func(t *testing.T) {
			var hit []string
			for _, plant := range plants() {
				if res := runRepairAttack(t, rt, plant, pin); res.outsideChanged != "" {
					hit = append(hit, plant+": "+res.outsideChanged)
				}
			}
			if len(hit) == 0 {
				t.Errorf("with the fix off no plant changed anything outside: the attack tests of %s prove nothing", rt.repair)
			}
			t.Logf("with the fix off: %q", hit)
		})
	}
}

func readOrNil(p string) []byte {
	data, _ := os.ReadFile(p)
	return data
}

// TestAttackRepairReadsFIFO: a command replaces a file the runner reads
// after it with a FIFO (.git/index read by every snapshot, the
// tripwire's files, the ignore rules' info/exclude, the HEAD and
// commondir of a nested repository whose commit the snapshots record). A plain open blocks
// until someone writes the FIFO: the run hung past every timeout. Now
// the run ends, within a minute, with its run.finished, and the FIFO is
// gone or named. (With the fix off, safefs.SetFollowLinks, the index
// read blocks and this test fails at its deadline.)
func TestAttackRepairReadsFIFO(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real bash (-short)")
	}
	for _, f := range []string{".git/index", ".git/info/exclude", ".git/HEAD", ".git/config", "sub/.git/HEAD", "sub/.git/commondir"} {
		for _, pin := range []string{"landlock", "off"} {
			t.Run(f+"/"+pin, func(t *testing.T) {
				skipUnavailable(t, pin)
				t.Setenv("XDG_CACHE_HOME", t.TempDir())
				nested := "" // a nested repository the snapshots read the HEAD of
				if strings.HasPrefix(f, "sub/") {
					nested = "test -d sub || git init -q sub; "
				}
				repo := gittest.Repo(t, map[string]string{"Makefile": "all:\n\t" + nested + "mkdir -p .git/info; rm -f " + f + "; mkfifo " + f + "; echo x > a.txt\n"})
				r := testRun{spec: gateSpec, repo: repo, replies: []llmtest.Reply{makeTurn(), makeTurn(), llmtest.Turn{Text: "Built."}.Reply()}}.
					sandboxed(pin).execWithin(t, time.Minute, "the run still hangs a minute after a command put a FIFO at "+f)
				recs, err := r.recs, r.err
				gates, _ := gatesOf(t, recs)
				named := err != nil && strings.Contains(err.Error(), f)
				for _, g := range gates {
					named = named || slices.Contains(g.Paths, f)
				}
				// A FIFO in a repository the command made is its own file, not
				// the runner's to remove: there the run only has to end.
				if fi, err := os.Lstat(filepath.Join(repo, f)); err == nil && fi.Mode()&fs.ModeNamedPipe != 0 && !named && nested == "" {
					t.Errorf("the FIFO at %s is left and neither a gate nor the run's error names it (%v, gates %+v)", f, err, gates)
				}
			})
		}
	}
}

// TestTripwireKeepsUsersGitLink: a .git that was a symlink before the run
// (the user's own set-up) is kept: the tripwire repairs the directory it
// pointed to when the run started. With the sandbox off a command plants
// core.fsmonitor through it; the config is put back there, the gate
// names it, and the link is still the user's.
func TestTripwireKeepsUsersGitLink(t *testing.T) {
	repo := gittest.Repo(t, map[string]string{"Makefile": "all:\n\tgit config core.fsmonitor 'touch planted'\n"})
	real := filepath.Join(t.TempDir(), "gitdir")
	if err := os.Rename(filepath.Join(repo, ".git"), real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(repo, ".git")); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(real, "config"))
	if err != nil {
		t.Fatal(err)
	}
	_, recs, _ := gateRun(t, repo, "sandbox: {mode: off}\n", makeTurn())
	gates, _ := gatesOf(t, recs)
	if !slices.ContainsFunc(gates, func(g event.GateFailed) bool {
		return g.Gate == event.GateGitTripwire && slices.Contains(g.Paths, ".git/config")
	}) {
		t.Errorf("no git_tripwire gate names .git/config: %+v", gates)
	}
	if after, _ := os.ReadFile(filepath.Join(real, "config")); !bytes.Equal(after, before) {
		t.Errorf("the config was not put back:\n%s", after)
	}
	if fi, err := os.Lstat(filepath.Join(repo, ".git")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf(".git is no longer the user's link: %v %v", fi, err)
	}
}
