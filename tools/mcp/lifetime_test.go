package mcp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/tools/mcp/mcptest"
)

// hostEnv makes this test binary a "runner": it starts a stdio server
// (this binary again), prints the server's pid and waits to be killed.
const hostEnv = "MCPTEST_HOST_LOG"

// maybeHost runs the host mode (from TestMain) and never returns in it.
func maybeHost() {
	logPath := os.Getenv(hostEnv)
	if logPath == "" {
		return
	}
	exe, _ := os.Executable()
	srv := Server{Name: "child", Command: []string{exe}, Env: mcptest.Env(mcptest.ModeStubborn, logPath), Timeout: 20 * time.Second}
	set, err := Start(context.Background(), Options{Servers: []Server{srv}, Offer: offerAllBut()}, "host")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	_ = set
	fmt.Println("ready")
	select {}
}

// TestServersDieWithTheRunner: when the runner is killed (SIGKILL: no
// chance to clean up), the kernel kills its stdio servers, even one that
// outlives the end of its stdin and ignores SIGTERM.
func TestServersDieWithTheRunner(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rec := &mcptest.Recorder{Path: filepath.Join(t.TempDir(), "server.log")}
	host := exec.CommandContext(t.Context(), exe, "-test.run=^$")
	host.Env = append(os.Environ(), hostEnv+"="+rec.Path)
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		_ = host.Process.Kill()
		t.Fatalf("host: %q, %v", line, err)
	}
	pid := serverPid(t, rec)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // a failed test leaves no server behind
	if !processAlive(pid) {
		t.Fatalf("server %d is not running", pid)
	}
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait()
	waitFor(t, func() bool { return !processAlive(pid) }, "the server (pid "+strconv.Itoa(pid)+") to die with its runner")
}
