package sandbox_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestChildrenDieWithRunner kills the runner (SIGKILL, no chance to clean
// up) while a sandboxed bash has background jobs, including one that left
// the process group (setsid), and checks that none of them survives, in
// every mode: with mode off the command runs under the helper as a reaper
// (unsandboxed, but a child subreaper with the runner's death signal).
func TestChildrenDieWithRunner(t *testing.T) {
	sets := layerSets()
	sets["off"] = nil
	for name, layers := range sets {
		for launch, perCommand := range launchSets() {
			if layers == nil && perCommand {
				continue
			}
			sub := name + "/" + launch
			if layers == nil {
				sub = name
			}
			t.Run(sub, func(t *testing.T) { childrenDieWithRunner(t, layers, perCommand) })
		}
	}
}

func childrenDieWithRunner(t *testing.T, layers []sandbox.Layer, perCommand bool) {
	t.Helper()
	{
		{
			mode := sandbox.ModeAuto
			if layers == nil {
				mode = sandbox.ModeOff
			}
			requireLayers(t, layers)
			id := markID()
			tree := t.TempDir()
			// sleep takes fractional seconds: the digits mark our processes
			script := "sleep 300." + id + " & setsid sleep 301." + id + " & (sleep 302." + id + " &) ; echo started; wait"
			conf, err := json.Marshal(fakeRunner{
				Policy: sandbox.Policy{WorkTree: tree, Layers: layers, Mode: mode, PerCommandHelper: perCommand},
				Argv:   []string{"bash", "-c", script}, Dir: tree, Env: []string{"PATH=" + os.Getenv("PATH")},
			})
			if err != nil {
				t.Fatal(err)
			}
			exe, _ := os.Executable()
			runner := exec.CommandContext(t.Context(), exe)
			runner.Env = []string{fakeRunnerEnv + "=" + string(conf), "PATH=" + os.Getenv("PATH")}
			stdout, err := runner.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			runner.Stderr = os.Stderr
			if err := runner.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			if strings.TrimSpace(line) != "started" {
				_ = runner.Process.Kill()
				t.Fatalf("sandboxed bash did not start: %q", line)
			}
			for deadline := time.Now().Add(30 * time.Second); len(marked(id)) < 3 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond) // the jobs exec sleep after bash printed
			}
			if n := len(marked(id)); n != 3 {
				t.Fatalf("want 3 marked sleeps running before the kill, found %d", n)
			}
			if err := runner.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = runner.Wait()
			left := marked(id)
			for deadline := time.Now().Add(30 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = marked(id) {
				time.Sleep(20 * time.Millisecond) // the kernel delivers the death signal asynchronously
			}
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			if len(left) > 0 { // mode off too: its commands run under the helper as a reaper
				t.Errorf("%d processes (mode %s) survived the runner's SIGKILL", len(left), mode)
			}
			for deadline := time.Now().Add(30 * time.Second); len(marked(tree)) > 0 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			if helpers := marked(tree); len(helpers) > 0 {
				t.Errorf("the sandbox's zygote or helper (pids %v) survived the runner's SIGKILL", helpers)
			}
		}
	}
}

// markID is a 12-digit random number for the fractional part of a test's
// sleeps ("sleep 300.<id>"), by which marked finds them: random per
// process, so the same test running at the same moment in another
// process (another package's test binary, another checkout's run on a
// shared machine) never has the same marks. A clock's last digits could
// repeat, and a short one is a substring of many.
func markID() string { return fmt.Sprintf("%012d", rand.Int64N(1_000_000_000_000)) }

// marked lists the pids of processes whose command line holds id (and is
// one of the test's sleeps, unless id is a path: the helpers' policy
// names the work tree).
func marked(id string) []int {
	var out []int
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		sleep := strings.Contains(string(b), "sleep\x0030") || strings.HasPrefix(id, "/")
		if err != nil || !sleep || !strings.Contains(string(b), id) {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(filepath.Base(filepath.Dir(p)), &pid); err == nil {
			out = append(out, pid)
		}
	}
	return out
}
