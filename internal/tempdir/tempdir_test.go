package tempdir

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain doubles as the owner process of TestCollectKilledOwner: with
// TEMPDIR_HELPER set it makes a Dir there, prints its path and waits to
// be killed.
func TestMain(m *testing.M) {
	if parent := os.Getenv("TEMPDIR_HELPER"); parent != "" {
		d, err := New(parent, "runner-run-*")
		if err != nil {
			os.Exit(3)
		}
		if err := os.WriteFile(filepath.Join(d.Path(), "data"), []byte("x"), 0o644); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(d.Path() + "\n")
		// Until SIGKILL. Not select{}: with nothing else to run the runtime
		// may end the process as deadlocked, and d must stay reachable, or
		// its lock file's finalizer closes the fd and drops the lock.
		time.Sleep(time.Hour)
		runtime.KeepAlive(d)
	}
	os.Exit(m.Run())
}

// TestCollectKilledOwner: the dir of a process killed with SIGKILL is
// collected; a live process's dir (ours), a dir of another pattern and a
// dir without a lock file are left; Remove deletes ours.
func TestCollectKilledOwner(t *testing.T) {
	parent := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TEMPDIR_HELPER="+parent)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	dead := strings.TrimSpace(line)

	live, err := New(parent, "runner-run-*")
	if err != nil {
		t.Fatal(err)
	}
	unlocked := filepath.Join(parent, "runner-run-nolock")
	other, err := New(parent, "other-*")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(unlocked, 0o755); err != nil {
		t.Fatal(err)
	}

	// The owner is alive: nothing is collected.
	if got, err := Collect(parent, "runner-run-*"); err != nil || len(got) != 0 {
		t.Fatalf("collected %v (%v) while every owner lives", got, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	got, err := Collect(parent, "runner-run-*")
	if err != nil || !slices.Equal(got, []string{dead}) {
		t.Fatalf("collected %v (%v), want the killed owner's %s", got, err, dead)
	}
	for _, d := range []string{live.Path(), unlocked, other.Path()} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", dead, err)
	}
	if err := live.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := live.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live.Path()); !os.IsNotExist(err) {
		t.Errorf("Remove left %s (%v)", live.Path(), err)
	}
}
