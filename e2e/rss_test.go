package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Environment of the test binary started as the peak-memory helper.
const (
	rssHelperEnv = "E2E_RSS_HELPER"
	rssOutEnv    = "E2E_RSS_OUT"
)

// measureRSS makes cmd run under the peak-memory helper; call it after
// cmd.Env is set, and peakRSS after cmd ended.
//
// The runner's own ru_maxrss cannot be read directly: exec from a
// vfork'd child keeps the parent's high-water mark, so any memory this
// test process once held counts as the runner's. The helper is this test
// binary, started afresh: the runner, forked from that small process,
// reports only its own peak.
func measureRSS(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rss")
	cmd.Args = append([]string{self, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = self
	cmd.Env = append(cmd.Env, rssHelperEnv+"=1", rssOutEnv+"="+out)
}

// peakRSS is the peak resident memory, in bytes, of the command that
// measureRSS wrapped.
func peakRSS(t *testing.T, cmd *exec.Cmd) int64 {
	t.Helper()
	i := slicesIndexPrefix(cmd.Env, rssOutEnv+"=")
	if i < 0 {
		t.Fatal("peakRSS of a command measureRSS did not wrap")
	}
	data, err := os.ReadFile(strings.TrimPrefix(cmd.Env[i], rssOutEnv+"="))
	if err != nil {
		t.Fatalf("the peak-memory helper wrote nothing: %v", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// slicesIndexPrefix is the index of the last element of env with prefix.
func slicesIndexPrefix(env []string, prefix string) int {
	for i := len(env) - 1; i >= 0; i-- {
		if strings.HasPrefix(env[i], prefix) {
			return i
		}
	}
	return -1
}

// rssHelper runs os.Args[1:] as a child, writes its ru_maxrss in bytes to
// the file $E2E_RSS_OUT names, and exits with the child's exit code.
func rssHelper() int {
	out := os.Getenv(rssOutEnv)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, rssHelperEnv+"=") && !strings.HasPrefix(kv, rssOutEnv+"=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...) //nolint:noctx // the helper's own lifetime bounds it (Pdeathsig)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, os.Stdout, os.Stderr, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	if cmd.ProcessState == nil {
		os.Stderr.WriteString("rss helper: " + err.Error() + "\n")
		return 127
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		_ = os.WriteFile(out, []byte(strconv.FormatInt(ru.Maxrss<<10, 10)), 0o600) // KiB on Linux
	}
	return cmd.ProcessState.ExitCode()
}
