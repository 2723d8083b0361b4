package mcp

import (
	"os"
	"testing"

	"github.com/seed43ef5acb/runner/tools/mcp/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.MaybeServe() // the stdio test servers are this binary
	maybeHost()          // and so is the "runner" that TestServersDieWithTheRunner kills
	os.Exit(m.Run())
}
