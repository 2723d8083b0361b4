package pipeline

import (
	"os"
	"testing"

	"github.com/seed43ef5acb/runner/tools/mcp/mcptest"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main()       // first: the sandbox helper is this binary run again
	mcptest.MaybeServe() // stdio MCP test servers are this binary run again
	os.Exit(m.Run())
}
