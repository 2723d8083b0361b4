package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestExecWithEverythingServer: runner exec with the MCP project's
// reference server (@modelcontextprotocol/server-everything, a Node
// program from npm) as a stdio server inside the sandbox; get-env is
// denied and so never offered.
func TestExecWithEverythingServer(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: this end-to-end test needs it (.ci/run installs it with apt)")
	}
	script, err := filepath.Abs("../.ci/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("@modelcontextprotocol/server-everything is not installed (npm install --prefix .ci/node @modelcontextprotocol/server-everything, as .ci/run does): %v", err)
	}
	if len(sandbox.Probe().Available()) == 0 {
		t.Skipf("no sandbox layer on this machine: %s", sandbox.Probe().Missing())
	}
	specPath, repo := execFixture(t)
	mustWrite(t, specPath, fmt.Sprintf(`version: 1
name: everything
model: gpt-4.1-mini
prompt: Use the tools.
mcp:
  servers:
    everything: {command: [%q, %q, stdio], timeout: 60s}
permissions:
  mcp: {"everything/*": allow, "everything/get-env": deny}
limits: {max_steps: 3}
`, node, script))
	// The tool not offered comes first: calls that succeed after it keep
	// the run a success (an answer right after a call that could not run
	// is failed, class blocked).
	model := newModel(t, llmtest.ToolCalls(
		llmtest.Call("mcp__everything__get-env", `{}`),
		llmtest.Call("mcp__everything__echo", `{"message":"hello from the sandbox"}`),
		llmtest.Call("mcp__everything__get-sum", `{"a":20,"b":22}`),
	), llmtest.Text("Done."))
	out := t.TempDir()
	res, err := Exec(t.Context(), ExecOptions{Task: specPath, Repo: repo, Out: out, BaseURL: model.URL(),
		APIKey: "sk-unit-0123456789abcdef", Quiet: true, Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}})
	if err != nil || res.Status != event.StatusSuccess {
		t.Fatalf("Exec: %v (%+v)", err, res.Error)
	}
	data, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range validLog(t, data) {
		var e struct {
			Tool   string         `json:"tool"`
			MCP    *event.MCPTool `json:"mcp"`
			Output string         `json:"output"`
			Error  string         `json:"error"`
		}
		if r.Type == "tool.completed" || r.Type == "tool.failed" {
			if err := json.Unmarshal(r.Raw, &e); err != nil {
				t.Fatal(err)
			}
			got[e.Tool] = r.Type + " " + e.Output + e.Error
			if r.Type == "tool.completed" && (e.MCP == nil || e.MCP.Server != "everything") {
				t.Errorf("%s: mcp = %+v", e.Tool, e.MCP)
			}
		}
	}
	for tool, want := range map[string]string{
		"mcp__everything__echo":    "tool.completed Echo: hello from the sandbox",
		"mcp__everything__get-sum": "tool.completed",
		"mcp__everything__get-env": `tool.failed unknown tool "mcp__everything__get-env"`,
	} {
		if !strings.HasPrefix(got[tool], want) {
			t.Errorf("%s: %q, want %q…", tool, got[tool], want)
		}
	}
	if !strings.Contains(got["mcp__everything__get-sum"], "42") {
		t.Errorf("get-sum: %q", got["mcp__everything__get-sum"])
	}
}
