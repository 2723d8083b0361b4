package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// attackPins are the sandboxes an attack runs under: each layer pinned
// on its own, both, and "off" (sandbox.mode off: the control that shows
// the attack works).
func attackPins() []string { return []string{"off", "namespaces", "landlock", "namespaces,landlock"} }

// requirePin skips the test when a pinned layer is missing here.
func requirePin(t *testing.T, pin string) {
	t.Helper()
	if pin == "off" {
		return
	}
	layers, err := sandbox.ParseLayers(pin)
	if err != nil {
		t.Fatal(err)
	}
	sup := sandbox.Probe()
	for _, l := range layers {
		if !slices.Contains(sup.Available(), l) {
			t.Skipf("layer %s is not available here: %s", l, sup.Missing())
		}
	}
}

// attackResult is what one attack run left.
type attackResult struct {
	err    error
	recs   []event.Record
	srv    *llmtest.Server
	stderr string
}

// attackRun runs gateSpec (make allowed) plus section on repo under pin
// (attackPins), the model calling make once and then answering.
func attackRun(t *testing.T, repo, pin, section string) attackResult {
	t.Helper()
	return attackRunEnv(t, repo, pin, section, t.TempDir())
}

// attackRunHome is attackRun with HOME set to home in the runner's
// environment.
func attackRunHome(t *testing.T, repo, pin, home string) attackResult {
	t.Helper()
	return attackRunEnv(t, repo, pin, "", t.TempDir(), "HOME="+home)
}

// attackRunEnv is attackRun with the out dir out and more of the
// runner's environment.
func attackRunEnv(t *testing.T, repo, pin, section, out string, more ...string) attackResult {
	t.Helper()
	c := testRun{repo: repo, replies: []llmtest.Reply{makeTurn(), llmtest.Turn{Text: "Built."}.Reply()}, env: more, out: out}
	if pin == "off" {
		section += "sandbox: {mode: off}\n"
	} else {
		c.pin = pin
	}
	c.spec = gateSpec + section
	r := c.exec(t)
	return attackResult{err: r.err, recs: r.recs, srv: r.srv, stderr: r.stderr}
}

// toolResults is every tool message the model was sent.
func (r attackResult) toolResults() string {
	var b strings.Builder
	for _, req := range r.srv.Requests() {
		for _, m := range req.Messages() {
			if m["role"] == "tool" {
				c, _ := m["content"].(string)
				b.WriteString(c + "\n")
			}
		}
	}
	return b.String()
}

const attackDotenvSecret = "dotenv-secret-0123456789abcdef"

// TestAttackProtectedEnvNotSentToModel: a protected .env that is
// committed is hidden in the work tree, but its blob is in .git, which
// every command may read: an allowed make runs `git show HEAD:.env` and
// `git cat-file`. Whatever the sandbox, the value must not reach the
// model in the tool result (the event log redacted it already; the
// provider got it raw). The tool result says [REDACTED] instead.
func TestAttackProtectedEnvNotSentToModel(t *testing.T) {
	makefile := "all:\n\t@echo via-show: $$(git show HEAD:.env)\n\t@echo via-cat-file: $$(git cat-file -p $$(git rev-parse HEAD:.env))\n"
	for _, pin := range attackPins() {
		t.Run(pin, func(t *testing.T) {
			requirePin(t, pin)
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			repo := gittest.Repo(t, map[string]string{"Makefile": makefile, ".env": "API_TOKEN=" + attackDotenvSecret + "\n"})
			res := attackRun(t, repo, pin, "")
			got := res.toolResults()
			if !strings.Contains(got, "via-show:") {
				t.Fatalf("make did not run: tool results %q\n%s", got, res.stderr)
			}
			if strings.Contains(got, attackDotenvSecret) {
				t.Errorf("the protected .env's value reached the model in a tool result:\n%s", got)
			}
			if !strings.Contains(got, "API_TOKEN="+event.Redacted) {
				t.Errorf("the tool result does not show the redaction (did git show run?):\n%s", got)
			}
		})
	}
}

// TestAttackSnapshotStoreHidden: the snapshot store (the user cache's
// runner/snapshots, a bare git repository per work tree) holds the blob
// of every file the base snapshot saw, a protected .env that is neither
// committed nor ignored among them. A command that reads the store with
// git finds the value under mode off (the control); under every layer the
// store is hidden, of this run and of every other.
func TestAttackSnapshotStoreHidden(t *testing.T) {
	for _, pin := range attackPins() {
		t.Run(pin, func(t *testing.T) {
			requirePin(t, pin)
			cache := t.TempDir()
			t.Setenv("XDG_CACHE_HOME", cache)
			store := filepath.Join(cache, "runner", "snapshots")
			makefile := "all:\n\t-for d in " + store + "/*/; do git --git-dir=$$d cat-file --batch-all-objects --batch; done 2>/dev/null | grep -q " +
				attackDotenvSecret + " && echo found > loot.txt\n\t@ls " + store + " | wc -l > listed.txt\n"
			repo := gittest.Repo(t, map[string]string{"Makefile": makefile})
			mustWrite(t, filepath.Join(repo, ".env"), "API_TOKEN="+attackDotenvSecret+"\n") // untracked, not ignored: in the base snapshot
			res := attackRun(t, repo, pin, "")
			_, err := os.Stat(filepath.Join(repo, "loot.txt"))
			found := err == nil
			if listed, _ := os.ReadFile(filepath.Join(repo, "listed.txt")); len(listed) == 0 {
				t.Fatalf("make did not run (no listed.txt): %v\n%s", res.err, res.stderr)
			}
			if want := pin == "off"; found != want {
				t.Errorf("the command found the protected .env in the snapshot store = %v, want %v (only with the sandbox off)", found, want)
			}
		})
	}
}

// attackHomeSecrets are credential stores below $HOME the sandbox hides,
// each planted with a secret in the test's HOME.
var attackHomeSecrets = []string{".ssh/id_ed25519", ".aws/credentials", ".git-credentials", ".config/git/credentials",
	".netrc", ".npmrc", ".pgpass", ".my.cnf", ".vault-token", ".config/containers/auth.json", ".docker/config.json",
	".config/gh/hosts.yml", ".kube/config", ".cache/huggingface/token", ".codex/auth.json", ".claude/.credentials.json",
	".gradle/gradle.properties", ".config/rclone/rclone.conf", ".bash_history"}

// TestAttackHomeCredentialStores: a command reads the runner's $HOME
// credential stores (the home is the runner's, not the sandbox's private
// one: the attacker reads it by its path). Under mode off (the control)
// it finds every planted secret; under every layer none.
func TestAttackHomeCredentialStores(t *testing.T) {
	for _, pin := range attackPins() {
		t.Run(pin, func(t *testing.T) {
			requirePin(t, pin)
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			home := t.TempDir()
			var paths []string
			for i, rel := range attackHomeSecrets {
				mustWrite(t, filepath.Join(home, rel), fmt.Sprintf("token=home-secret-%02d-0123456789\n", i))
				paths = append(paths, filepath.Join(home, rel))
			}
			makefile := "all:\n\t-cat " + strings.Join(paths, " ") + " 2>/dev/null | grep -o 'home-secret-[0-9]*' | tr -d - > loot.txt\n"
			repo := gittest.Repo(t, map[string]string{"Makefile": makefile})
			res := attackRunHome(t, repo, pin, home)
			loot, err := os.ReadFile(filepath.Join(repo, "loot.txt"))
			if err != nil {
				t.Fatalf("make did not run: %v\n%s", err, res.stderr)
			}
			got := strings.Fields(string(loot))
			if pin == "off" {
				if len(got) != len(attackHomeSecrets) {
					t.Errorf("the control read %d of %d stores: %q", len(got), len(attackHomeSecrets), got)
				}
				return
			}
			for _, g := range got {
				var i int
				_, _ = fmt.Sscanf(strings.TrimPrefix(g, "homesecret"), "%d", &i)
				t.Errorf("the command read ~/%s (%s)", attackHomeSecrets[i], g)
			}
		})
	}
}

// TestAttackGitObjectsAndModules: two ways to change what git does later
// that lie outside the tripwire's files. A command replaces the loose
// object of a committed file with other content under the same name (git
// does not check a blob's hash when it checks it out: the user's next
// `git checkout -- README` writes the payload), and adds core.fsmonitor to
// a submodule's config in .git/modules (the superproject's next `git
// status` runs it). With namespaces .git is read-only; with Landlock only
// the run must fail with the git tripwire or leave both as they were.
// Mode off is the control.
func TestAttackGitObjectsAndModules(t *testing.T) {
	for _, pin := range attackPins() {
		t.Run(pin, func(t *testing.T) {
			requirePin(t, pin)
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			marker := filepath.Join(t.TempDir(), "fsmonitor-ran")
			sub := gittest.Repo(t, map[string]string{"s.txt": "s\n"})
			repo := gittest.Repo(t, map[string]string{"README": "hello\n", "swap.py": `import sys, zlib, subprocess, os
oid = subprocess.check_output(["git", "rev-parse", "HEAD:README"], text=True).strip()
p = os.path.join(".git", "objects", oid[:2], oid[2:])
data = b"payload\n"
os.chmod(p, 0o644)
open(p, "wb").write(zlib.compress(b"blob %d\0" % len(data) + data))
`, "Makefile": "all:\n\t-python3 swap.py\n\t-printf '[core]\\n\\tfsmonitor = touch " + marker + "\\n' >> .git/modules/sub/config\n"})
			gittest.Run(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
			gittest.Run(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "sub")
			res := attackRun(t, repo, pin, "")
			gates, fin := gatesOf(t, res.recs)
			caught := fin.Status == "violation" && slices.Contains(gateKinds(gates), event.GateGitTripwire)
			if err := os.Remove(filepath.Join(repo, "README")); err != nil {
				t.Fatal(err)
			}
			gittest.Run(t, repo, "checkout", "--", "README")
			readme, _ := os.ReadFile(filepath.Join(repo, "README"))
			gittest.Run(t, repo, "status", "--short")
			_, err := os.Stat(marker)
			ran := err == nil
			swapped := string(readme) == "payload\n"
			switch {
			case pin == "off": // unsandboxed both changes happen; the tripwire must still see them
				if !swapped || !caught {
					t.Errorf("the control: README checked out as %q, caught by the tripwire %v (%+v)", readme, caught, gates)
				}
			case caught:
				t.Logf("caught by the tripwire: %+v", gates)
			case swapped || ran:
				t.Errorf("status %s, no tripwire: the next checkout wrote README as %q (swapped object = %v), the next git status ran the submodule's fsmonitor = %v", fin.Status, readme, swapped, ran)
			}
		})
	}
}

// attackRunOut is attackRun with the out dir out.
func attackRunOut(t *testing.T, repo, pin, section, out string) attackResult {
	t.Helper()
	return attackRunEnv(t, repo, pin, section, out)
}

// TestAttackZygoteKillDaemonOutlivesRun: with Landlock only a command
// may kill its zygote (same Landlock domain). One leaves a process in a
// new session first, which waits for the run's run.finished and then
// plants core.fsmonitor in .git/config and a file in the tree: after the
// tripwire and the patch, so neither sees it, and the run reports
// success. Under every layer no process of the run may be
// left alive after it (the process counts a heartbeat in the tree); mode
// off is the control (its zygote is only a reaper, so the plant happens).
// The zygote (make's parent, read from /proc: no procps needed) is killed
// before make: killed the other way round, a mode-off zygote that runs
// between the two kills sees its command end and kills the daemon, and
// the control fails (seen once in CI under -race on two busy cores).
func TestAttackZygoteKillDaemonOutlivesRun(t *testing.T) {
	for _, pin := range attackPins() {
		t.Run(pin, func(t *testing.T) {
			requirePin(t, pin)
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			out := t.TempDir()
			marker := filepath.Join(t.TempDir(), "fsmonitor-ran")
			daemon := "for i in $$(seq 300); do echo $$i > heartbeat; sleep 0.1; grep -q run.finished " + filepath.Join(out, "events.jsonl") +
				` && { printf "[core]\n\tfsmonitor = touch ` + marker + `\n" >> .git/config; echo late > planted.txt; exit; }; done`
			makefile := "all:\n\t(setsid bash -c '" + daemon + "' </dev/null >/dev/null 2>&1 &); sleep 0.3; kill -9 $$(cut -d' ' -f4 /proc/$$PPID/stat) $$PPID\n"
			repo := gittest.Repo(t, map[string]string{"Makefile": makefile})
			res := attackRunOut(t, repo, pin, "", out)
			beat := func() string { b, _ := os.ReadFile(filepath.Join(repo, "heartbeat")); return string(b) }
			first := beat()
			time.Sleep(1500 * time.Millisecond)
			alive := beat() != first
			planted := func() bool {
				_, err := os.Stat(filepath.Join(repo, "planted.txt"))
				cfg, _ := os.ReadFile(filepath.Join(repo, ".git", "config"))
				return err == nil && strings.Contains(string(cfg), "fsmonitor")
			}
			// The control's daemon plants once it sees run.finished: wait
			// for that whether or not a heartbeat came in the 1.5 s (on a
			// loaded machine one beat can take longer). Under a layer the
			// wait is only for a daemon seen alive.
			for deadline := time.Now().Add(30 * time.Second); (alive || pin == "off") && !planted() && time.Now().Before(deadline); {
				time.Sleep(200 * time.Millisecond)
			}
			_, fin := gatesOf(t, res.recs)
			switch {
			case pin == "off" && !planted():
				t.Errorf("the control did not plant (alive after the run %v, heartbeat %q): the attack is broken", alive, beat())
			case pin != "off" && (alive || planted()):
				t.Errorf("a process the run (status %s) left was alive after it = %v and planted a file in the tree and core.fsmonitor in .git/config = %v", fin.Status, alive, planted())
			}
		})
	}
}
