package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// everythingScript is the entry point of @modelcontextprotocol/server-everything
// as .ci/run installs it (npm install --prefix .ci/node).
func everythingScript(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the end-to-end test with @modelcontextprotocol/server-everything needs it (.ci/run installs it with apt)")
	}
	script, err = filepath.Abs("../../.ci/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("@modelcontextprotocol/server-everything is not installed (npm install --prefix .ci/node @modelcontextprotocol/server-everything, as .ci/run does): %v", err)
	}
	return node, script
}

// TestEverythingServer runs the reference server of the MCP project over
// stdio: listing, plain and structured results, images, progress
// notifications, and a tool the policy denies (never offered).
func TestEverythingServer(t *testing.T) {
	node, script := everythingScript(t)
	srv := Server{Name: "everything", Command: []string{node, script, "stdio"},
		Env: []string{"PATH=" + os.Getenv("PATH"), "GIVEN=only-this"}, Timeout: 30 * time.Second}
	dir := t.TempDir()
	set := start(t, Options{Servers: []Server{srv}, Offer: offerAllBut("get-env"), StderrDir: dir})
	info := set.Servers()[0]
	if info.ServerName != "mcp-servers/everything" || info.Listed < 10 || info.Offered != info.Listed-1 {
		t.Errorf("server info %+v", info)
	}
	if slices.Contains(names(set), ToolName("everything", "get-env")) {
		t.Error("get-env is offered although denied")
	}
	tests := []struct{ tool, input, want string }{
		{"echo", `{"message":"hello MCP"}`, "Echo: hello MCP"},
		{"get-sum", `{"a":2,"b":40}`, "42"},
		{"get-tiny-image", `{}`, "[image: image/png"},
		{"get-structured-content", `{"location":"Chicago"}`, "temperature"},
		{"get-resource-links", `{"count":2}`, "[resource link: "},
		{"trigger-long-running-operation", `{"duration":1,"steps":2}`, "completed"},
	}
	for _, tt := range tests {
		res := call(t, toolByName(t, set, ToolName("everything", tt.tool)), tt.input)
		if res.IsError || !strings.Contains(res.Output, tt.want) {
			t.Errorf("%s: %+v, want %q in the output", tt.tool, res, tt.want)
		}
	}
	// Bad arguments are the server's isError result (or a protocol error):
	// either way a tool error the model reads.
	if res := call(t, toolByName(t, set, ToolName("everything", "get-sum")), `{"a":"x"}`); !res.IsError {
		t.Errorf("invalid arguments: %+v", res)
	}
	waitFor(t, func() bool { return set.conns[0].notified.Load() >= 1 }, "progress notifications of the long-running operation")
}
