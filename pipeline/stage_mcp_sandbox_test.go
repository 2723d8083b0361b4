package pipeline

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/mcp/mcptest"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestExecMCPServersInTheSandbox runs the attack for real: a stdio server
// without holes cannot write outside the work tree or reach a listener on
// the host's loopback; a server whose sandbox opens a writable directory
// and the network can do both, and only those.
func TestExecMCPServersInTheSandbox(t *testing.T) {
	if len(sandbox.Probe().Available()) == 0 {
		t.Skipf("no sandbox layer on this machine: %s", sandbox.Probe().Missing())
	}
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	outside, hole := t.TempDir(), t.TempDir()
	_, repo := execFixture(t)
	env := fmt.Sprintf("{MCPTEST_MODE: %s}", mcptest.ModeServe)
	specText := fmt.Sprintf(`version: 1
name: mcp-sandbox
model: gpt-4.1-mini
prompt: Try.
mcp:
  servers:
    boxed: {command: [%q], env: %s}
    holed: {command: [%q], env: %s, sandbox: {writable: [%q], network: allow}}
permissions:
  mcp: {"boxed/*": allow, "holed/*": allow}
  edit: {"inside.txt": allow} # what a server writes is judged by the edit rules after the run
limits: {max_steps: 3}
`, exe, env, exe, env, hole)
	addr := ln.Addr().String()
	r := testRun{spec: specText, repo: repo, env: []string{"HOME=" + t.TempDir()},
		replies: []llmtest.Reply{llmtest.ToolCalls(
			llmtest.Call("mcp__boxed__write", fmt.Sprintf(`{"text":%q}`, filepath.Join(outside, "escaped"))),
			llmtest.Call("mcp__boxed__write", fmt.Sprintf(`{"text":%q}`, filepath.Join(repo, "inside.txt"))),
			llmtest.Call("mcp__boxed__dial", fmt.Sprintf(`{"text":%q}`, addr)),
			llmtest.Call("mcp__holed__write", fmt.Sprintf(`{"text":%q}`, filepath.Join(hole, "allowed"))),
			llmtest.Call("mcp__holed__dial", fmt.Sprintf(`{"text":%q}`, addr)),
		), llmtest.Text("Done.")}}.exec(t)
	if r.err != nil || r.res.Status != event.StatusSuccess {
		t.Fatalf("Exec: %v (%+v)", r.err, r.res.Error)
	}
	recs := r.recs
	var started event.RunStarted
	if err := recs[0].Decode(&started); err != nil {
		t.Fatal(err)
	}
	if len(started.MCP) != 2 || started.MCP[0].Name != "boxed" || started.MCP[0].Network || len(started.MCP[0].Writable) != 0 ||
		started.MCP[1].Name != "holed" || !started.MCP[1].Network || len(started.MCP[1].Writable) != 1 || started.MCP[1].Writable[0] != hole ||
		started.MCP[1].Transport != "stdio" || started.MCP[1].ToolsOffered != started.MCP[1].ToolsListed {
		t.Errorf("run.started mcp = %+v", started.MCP)
	}
	var outputs []string
	for _, r := range recs {
		if r.Type == "tool.completed" {
			var e event.ToolCompleted
			if err := json.Unmarshal(r.Raw, &e); err != nil {
				t.Fatal(err)
			}
			outputs = append(outputs, e.Tool+": "+e.Output)
		}
	}
	want := []string{
		"mcp__boxed__write: write failed: ",
		"mcp__boxed__write: wrote " + filepath.Join(repo, "inside.txt"),
		"mcp__boxed__dial: dial failed: ",
		"mcp__holed__write: wrote " + filepath.Join(hole, "allowed"),
		"mcp__holed__dial: connected to " + addr,
	}
	if len(outputs) != len(want) {
		t.Fatalf("outputs %q", outputs)
	}
	for i, w := range want {
		if !strings.HasPrefix(outputs[i], w) {
			t.Errorf("call %d: %q, want %q…", i, outputs[i], w)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped")); !os.IsNotExist(err) {
		t.Errorf("the boxed server wrote outside the work tree: %v", err)
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("the host listener accepted %d connections, want 1 (the holed server's)", n)
	}
}
