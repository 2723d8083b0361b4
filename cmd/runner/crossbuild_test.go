package main

import (
	"os"
	"os/exec"
	"testing"
)

// TestBuildsForMacOS: the runner builds for macOS (where bash is refused
// unless the spec says sandbox mode off, README: Sandbox), so Linux-only
// calls (inotify, getdents, namespaces) stay behind build tags.
func TestBuildsForMacOS(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiling the module is slow; skipped with -short")
	}
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", os.DevNull, "./cmd/runner")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=darwin go build ./cmd/runner: %v\n%s", err, out)
	}
}
