package pipeline

import (
	"os"
	"testing"

	"github.com/seed43ef5acb/runner/tools/mcp/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.MaybeServe() // stdio MCP test servers are this binary run again
	os.Exit(m.Run())
}
