package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDockerfileGoVersion: the image builds the runner with the Go that
// go.mod names, so the image and the archives are built alike.
func TestDockerfileGoVersion(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	docker, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	got := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindSubmatch(docker)
	if want == nil || got == nil || string(got[1]) != string(want[1]) {
		t.Errorf("Dockerfile ARG GO_VERSION %q, go.mod says go %q: make them equal", got, want)
	}
}

// containerEngine is docker or podman with a working engine; the test is
// skipped, saying why, without one.
func containerEngine(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"docker", "podman"} {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if out, err := exec.CommandContext(t.Context(), p, "info").CombinedOutput(); err != nil {
			t.Skipf("%s is installed but its engine does not answer (%v): %s", name, err, strings.TrimSpace(string(out)))
		}
		return p
	}
	t.Skip("no container engine (docker or podman) on this machine: the image is built and run where one exists " +
		"(the release workflow builds it with docker buildx)")
	return ""
}

// TestImage builds the image from the Dockerfile and runs it: the
// version, the non-root user with bash and git, and the offline demo.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("building an image is slow; skipped with -short")
	}
	engine := containerEngine(t)
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	tag := "runner-image-test:" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(t.Context(), engine, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(engine), strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("build", "--build-arg", "VERSION=v0.0.0-imagetest", "-t", tag, root)
	t.Cleanup(func() { _ = exec.Command(engine, "rmi", "-f", tag).Run() }) //nolint:noctx // t.Context is done in cleanup
	if got := run("run", "--rm", tag, "version"); got != "runner v0.0.0-imagetest" {
		t.Errorf("runner version in the image: %q", got)
	}
	if got := run("run", "--rm", "--entrypoint", "id", tag, "-u"); got != "10001" {
		t.Errorf("the image runs as uid %q, want 10001", got)
	}
	for _, tool := range []string{"bash", "git"} {
		run("run", "--rm", "--entrypoint", tool, tag, "--version")
	}
	out := run("run", "--rm", "-v", filepath.Join(root, "examples")+":/examples:ro", tag,
		"exec", "/examples/hello/task.yaml", "--repo", "/examples/hello/project", "--isolate",
		"--replay", "/examples/hello/session.jsonl")
	t.Logf("the hello demo in the image:\n%s", out)
}
