package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func bashEnv(t *testing.T) Env {
	t.Helper()
	return Env{WorkTree: t.TempDir(), OutputDir: t.TempDir(), Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"}}
}

func TestBashTimeoutLimits(t *testing.T) {
	t.Parallel()
	b := &bashTool{base: base{env: Env{BashTimeout: 20 * time.Minute}}}
	if got := b.timeout(0); got != 20*time.Minute {
		t.Errorf("default above the built-in cap = %v", got)
	}
	if got := b.timeout(1000); got != time.Second {
		t.Errorf("timeout_ms 1000 = %v", got)
	}
	b.env = Env{}
	if got := b.timeout(3_600_000); got != MaxBashTimeout {
		t.Errorf("an hour is capped at %v, got %v", MaxBashTimeout, got)
	}
	if got := b.timeout(0); got != DefaultBashTimeout {
		t.Errorf("default = %v", got)
	}
}

func TestBashBasics(t *testing.T) {
	t.Parallel()
	env := bashEnv(t)
	b := tool(t, env, "bash")
	res := run(t, b, BashParams{Command: "pwd; echo err >&2; read x; echo \"read=$?\""})
	real, _ := filepath.EvalSymlinks(env.WorkTree)
	if res.IsError || !strings.Contains(res.Output, real+"\nerr\n") || !strings.Contains(res.Output, "read=1") {
		t.Errorf("output = %q", res.Output)
	}
	if res.Metadata["exit_code"] != 0 || !res.TouchedUnknown {
		t.Errorf("metadata = %v, TouchedUnknown = %v", res.Metadata, res.TouchedUnknown)
	}
	res = run(t, b, BashParams{Command: "echo partial; exit 3"})
	if !res.IsError || res.Metadata["exit_code"] != 3 || !strings.Contains(res.Output, "partial") || !strings.Contains(res.Output, "exit code 3") {
		t.Errorf("exit 3: %+v", res)
	}
	if res := run(t, b, BashParams{Command: "  "}); !res.IsError {
		t.Errorf("empty command: %+v", res)
	}
	if res, err := b.Run(t.Context(), Call{Input: json.RawMessage(`{"command": 5}`)}); err != nil || !res.IsError {
		t.Errorf("bad JSON: %+v %v", res, err)
	}
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	env := bashEnv(t)
	pids := filepath.Join(env.WorkTree, "pids")
	// a child and a grandchild, both in the background, then a foreground sleep
	cmd := fmt.Sprintf("sleep 300 & echo $! >> %[1]s; (sleep 300 & echo $! >> %[1]s; wait) & echo started; sleep 300", pids)
	start := time.Now()
	// long enough for bash to start both children and print "started" on
	// a loaded -race run (the timeout must come after that; 2 s relied on
	// a quick start)
	res := run(t, tool(t, env, "bash"), BashParams{Command: cmd, TimeoutMS: 10_000})
	if !res.IsError || res.Metadata["timed_out"] != true || !strings.Contains(res.Output, "started") || !strings.Contains(res.Output, "timed out") {
		t.Errorf("timeout result: %+v", res)
	}
	if time.Since(start) > 200*time.Second {
		t.Errorf("the call waited for the children to finish")
	}
	assertDead(t, pids)
}

func TestBashCancelKillsGroup(t *testing.T) {
	t.Parallel()
	env := bashEnv(t)
	pids := filepath.Join(env.WorkTree, "pids")
	ctx, cancel := contextWithCancelAfterFile(t, pids)
	defer cancel()
	raw, _ := json.Marshal(BashParams{Command: fmt.Sprintf("sleep 300 & echo $! >> %s; sleep 300", pids)})
	res, err := tool(t, env, "bash").Run(ctx, Call{Input: raw})
	if err == nil || !res.IsError {
		t.Errorf("cancelled run: %+v, %v", res, err)
	}
	assertDead(t, pids)
}

func TestBashBackgroundLeftoversKilled(t *testing.T) {
	t.Parallel()
	env := bashEnv(t)
	pids := filepath.Join(env.WorkTree, "pids")
	res := run(t, tool(t, env, "bash"), BashParams{Command: fmt.Sprintf("sleep 300 & echo $! >> %s; echo done", pids)})
	if res.IsError || !strings.Contains(res.Output, "done") {
		t.Errorf("result: %+v", res)
	}
	assertDead(t, pids)
}

func TestBashScrubsSecrets(t *testing.T) {
	t.Parallel()
	env := bashEnv(t)
	env.Environ = append(env.Environ, "OPENAI_API_KEY=sk-a", "GITHUB_TOKEN=t", "GH_TOKEN=t", "AWS_SECRET_ACCESS_KEY=s",
		"DB_PASSWORD=p", "MY_API_KEY=k", "NPM_AUTH=x", "SSH_PRIVATE_KEY=x", "SIGNING_KEY=x", "HARMLESS=ghp_0123456789abcdef0123",
		"GIT_AUTHOR_NAME=Ann", "GOFLAGS=-mod=mod", "BASH_ENV=/tmp/evil", "PASSED_TOKEN=ok")
	env.PassEnv = []string{"PASSED_TOKEN"}
	res := run(t, tool(t, env, "bash"), BashParams{Command: "env | sort"})
	for _, gone := range []string{"OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "AWS_SECRET", "DB_PASSWORD", "MY_API_KEY", "NPM_AUTH", "SSH_PRIVATE_KEY", "SIGNING_KEY", "HARMLESS", "BASH_ENV"} {
		if strings.Contains(res.Output, gone+"=") {
			t.Errorf("%s leaked:\n%s", gone, res.Output)
		}
	}
	for _, kept := range []string{"GIT_AUTHOR_NAME=Ann", "GOFLAGS=-mod=mod", "PASSED_TOKEN=ok", "PATH=", "GIT_TERMINAL_PROMPT=0"} {
		if !strings.Contains(res.Output, kept) {
			t.Errorf("%s missing:\n%s", kept, res.Output)
		}
	}
}

func TestBashOutputBounded(t *testing.T) {
	t.Parallel()
	env := bashEnv(t)
	env.MaxOutputBytes = 1000
	res := run(t, tool(t, env, "bash"), BashParams{Command: "echo FIRST; for i in $(seq 1 5000); do echo line $i; done; echo LAST"})
	if !res.Truncated || len(res.Output) > 1300 || !strings.HasPrefix(res.Output, "FIRST\n") || !strings.Contains(res.Output, "LAST") || !strings.Contains(res.Output, "bytes omitted") {
		t.Errorf("bounded output (%d bytes): %q", len(res.Output), res.Output)
	}
	full, _ := res.Metadata["output_path"].(string)
	if !strings.HasPrefix(filepath.Base(full), "bash-c1-") {
		t.Errorf("output file name %q does not carry the call ID", full)
	}
	var want strings.Builder // the file is created once the output outgrows the bound: it must hold the start too
	want.WriteString("FIRST\n")
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	want.WriteString("LAST\n")
	data, err := os.ReadFile(full)
	if err != nil || string(data) != want.String() || !strings.Contains(res.Output, full) {
		t.Errorf("full output file %q (%d bytes, want %d): %v", full, len(data), want.Len(), err)
	}
	// short output: no file is kept
	res = run(t, tool(t, env, "bash"), BashParams{Command: "echo short"})
	if _, ok := res.Metadata["output_path"]; ok || res.Truncated {
		t.Errorf("short output kept a file: %+v", res)
	}
	entries, _ := os.ReadDir(env.OutputDir)
	if len(entries) != 1 {
		t.Errorf("output dir holds %d files, want 1", len(entries))
	}
}

// assertDead fails unless every pid listed in file is gone (or a zombie
// about to be reaped by init).
func assertDead(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("pids: %v", err)
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		t.Fatal("no pids recorded")
	}
	for _, f := range fields {
		pid, _ := strconv.Atoi(f)
		deadline := time.Now().Add(30 * time.Second)
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d still running", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// state is the field after the parenthesised command name; Z = zombie
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
