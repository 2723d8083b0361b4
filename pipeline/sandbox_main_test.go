package pipeline

import (
	"os"
	"testing"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// TestMain makes this test binary able to serve as the sandbox helper
// (the bash tool re-executes it to set up the sandbox).
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}
