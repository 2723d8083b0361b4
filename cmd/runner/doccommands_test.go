package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docCommand is a shell command shown in a ```sh block of the docs, and
// how TestDocCommands checks it.
type docCommand struct {
	cmd     string // as shown, continuation lines joined, comment cut
	offline string // why it cannot run here; "" runs it
	dir     string // the work dir it runs in, shared in table order (see docDirs)
	shell   string // bash unless set
	needs   string // a program it needs besides the shell; absent, it is not run
	pre     string // run before it in the same shell
	exit    int    // the exit code it must end with
	want    string // a regexp its stdout and stderr must match
	after   string // run after it in the same shell; must exit 0 (checks the effect)
}

// docCommands lists every command of the docs' ```sh blocks. Placeholders
// (<run id>, /abs/) are filled in before a command runs.
var docCommands = []docCommand{
	// A checkout of this repository: Makefile, examples/, one git commit.
	// GO=true skips make's build step: bin/runner is this test binary.
	{cmd: "make demo", dir: "checkout", needs: "make", pre: "export GO=true; ",
		want: `(?m)✓ success .* 1 file changed .*\nOutputs: \.runner/runs/\S+ \(changes\.patch, summary\.md, events\.jsonl, result\.json, history\.jsonl\)$`, after: "ls .runner/runs/*/events.jsonl .runner/runs/*/changes.patch .runner/runs/*/summary.md .runner/runs/*/result.json"},
	{cmd: "bin/runner exec examples/anthropic/task.yaml --repo examples/hello/project --isolate --replay examples/anthropic/session.jsonl", dir: "checkout",
		want: "(?m)✓ success .* 1 file changed"},
	{cmd: "git -C examples/hello/project apply --directory=examples/hello/project /abs/.runner/runs/<id>/changes.patch", dir: "checkout", needs: "make", // applies make demo's patch
		after: "! git diff --quiet -- examples/hello/project"},
	// The hello project as a repository of its own, run once with --isolate.
	{cmd: "git apply .runner/runs/<run id>/changes.patch", dir: "project",
		pre:   "runner exec task.yaml --isolate --replay session.jsonl --quiet >/dev/null || exit 9; RUN_ID=$(ls .runner/runs); ",
		after: "! git diff --quiet"},
	{cmd: `jq -c 'select(.type == "permission.denied")' events.jsonl`, dir: "project", needs: "jq", pre: "cd .runner/runs/*/ || exit 9; "},
	// Getting started's checks before a run, and its replay (after the
	// lines above, which expect a single run in .runner/runs).
	{cmd: "runner validate task.yaml", dir: "project", want: "(?m)^task.yaml: ok$"},
	{cmd: `runner policy check task.yaml --bash "npm test"`, dir: "project", exit: 1, // the hello task allows go test only
		want: `(?m)^deny: bash "npm test"`},
	{cmd: "runner exec task.yaml --isolate --record session.jsonl", offline: "calls the model's API; the next line replays the hello task's cassette"},
	{cmd: "runner exec task.yaml --isolate --replay session.jsonl", dir: "project", // the tree holds the applied fix by now
		want: "(?m)^✓ success · 4 steps"},
	// Standard input: generate-spec stands for the user's program.
	{cmd: "generate-spec | runner validate -", dir: "stdin", want: "(?m)^<stdin>: ok$"},
	{cmd: "runner policy check - --bash 'make test' < task.yaml", dir: "stdin", exit: 1, want: "deny"},
	// Completion, each line in its own shell.
	{cmd: "source <(runner completion bash)", after: "complete -p runner"},
	{cmd: "source <(runner completion zsh)", shell: "zsh", pre: "autoload -U compinit && compinit -u -D; ", after: "[[ $_comps[runner] == _runner ]]"},
	{cmd: "runner completion fish | source", shell: "fish", after: "complete -C'runner vers' | grep -qx version"},

	{cmd: "go test -race -timeout 30m ./...", offline: "the whole test suite: this test is part of it (.ci/run runs it)"},
	{cmd: "go test ./internal/telemetry -run '^$' -bench SessionStep -benchtime 101x -v", offline: "runs offline, but is a benchmark of 303 model steps: too slow for the tests (make bench runs the benchmarks)"},
	{cmd: "CGO_ENABLED=0 go install github.com/seed43ef5acb/runner/cmd/runner@latest", offline: "downloads the module through the Go module proxy"},
	{cmd: "runner exec task.yaml", offline: "calls the model's API with your key; e2e's TestGettingStartedExamples runs it against a fake model"},
	{cmd: "export OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318", offline: "sets up the next line, which calls the model's API"},
	{cmd: "generate-spec | runner exec - --repo .", offline: "calls the model's API; testdata/script/stdin.txtar runs exec - with a cassette"},
	{cmd: "ssh host cat run/events.jsonl | runner report -", offline: "needs a remote host; testdata/script/stdin.txtar runs report -"},
	{cmd: "make release-snapshot", offline: "builds every archive with goreleaser for minutes; internal/release's snapshot test runs it"},
	{cmd: "docker run --rm ghcr.io/seed43ef5acb/runner:v0.1.0 version", offline: "needs a container engine and the published image; internal/release's TestImage runs it on a local build"},
	{cmd: `docker run --rm -v "$PWD/examples:/examples:ro" ghcr.io/seed43ef5acb/runner:v0.1.0 exec /examples/hello/task.yaml --repo /examples/hello/project --isolate --replay /examples/hello/session.jsonl`, offline: "needs a container engine and the published image; internal/release's TestImage runs it on a local build"},
	{cmd: "v=0.1.0 os=linux arch=amd64", offline: "sets up the release download below it"},
	{cmd: "curl -fsSLO https://github.com/seed43ef5acb/runner/releases/download/v$v/runner_${v}_${os}_${arch}.tar.gz", offline: "downloads from GitHub"},
	{cmd: "curl -fsSLO https://github.com/seed43ef5acb/runner/releases/download/v$v/checksums.txt", offline: "downloads from GitHub"},
	{cmd: "sha256sum --check --ignore-missing checksums.txt", offline: "checks the downloaded release archive"},
	{cmd: "gh attestation verify runner_${v}_${os}_${arch}.tar.gz --repo seed43ef5acb/runner", offline: "asks GitHub for the attestation"},
	{cmd: "tar -xzf runner_${v}_${os}_${arch}.tar.gz runner man/man1/runner.1", offline: "unpacks the downloaded release archive"},
	{cmd: "./runner version", offline: "the release archive's binary, which prints its tag; this one prints the build's version"},
}

var shellFence = regexp.MustCompile("^```(sh|bash|shell|console)$")

// shownCommand is a command in a ```sh block of a page.
type shownCommand struct{ page, cmd string }

// shownCommands returns the commands of the pages' ```sh blocks:
// continuation lines joined, comments cut, a "$ " prompt dropped. An
// indented line that starts like a command, outside any fence, fails the
// test: the doc test sees only fenced blocks.
func shownCommands(t *testing.T) []shownCommand {
	t.Helper()
	var out []shownCommand
	indented := regexp.MustCompile(`^    (runner|bin/runner|\./runner|make|go|git|docker|curl|export) `)
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		fence, cont := "", ""
		for i, line := range lines {
			trimmed := strings.TrimSpace(line)
			switch {
			case fence == "" && strings.HasPrefix(trimmed, "```"):
				fence = "other"
				if shellFence.MatchString(trimmed) {
					fence = "sh"
				}
				continue
			case fence != "" && trimmed == "```":
				fence = ""
				continue
			case fence == "" && indented.MatchString(line) && (i == 0 || strings.TrimSpace(lines[i-1]) == ""):
				t.Errorf("%s:%d: an indented command; put it in a ```sh block so TestDocCommands runs it", page, i+1)
			}
			if fence != "sh" {
				continue
			}
			if c, ok := strings.CutSuffix(trimmed, `\`); ok {
				cont += strings.TrimSpace(c) + " "
				continue
			}
			cmd := strings.TrimPrefix(cont+trimmed, "$ ")
			cont = ""
			if j := strings.Index(cmd, " #"); j >= 0 {
				cmd = strings.TrimSpace(cmd[:j])
			}
			if cmd != "" && !strings.HasPrefix(cmd, "#") {
				out = append(out, shownCommand{filepath.Base(page), cmd})
			}
		}
	}
	return out
}

// TestDocCommands runs every shell command the docs show, where it can
// run offline, and checks its exit code, output and effect; the others are
// listed in docCommands with the reason. A command shown but not listed,
// or listed but no longer shown, fails.
func TestDocCommands(t *testing.T) {
	shown := map[string]bool{}
	for _, s := range shownCommands(t) {
		shown[s.cmd] = true
		if !slices.ContainsFunc(docCommands, func(d docCommand) bool { return d.cmd == s.cmd }) {
			t.Errorf("%s shows %q, which docCommands neither runs nor lists as online-only: add it", s.page, s.cmd)
		}
	}
	path := runnerOnPath(t)
	dirs := map[string]string{}
	for _, d := range docCommands {
		if !shown[d.cmd] {
			t.Errorf("docCommands lists %q, which no page shows any more: remove it", d.cmd)
			continue
		}
		if d.offline != "" {
			continue
		}
		shell := d.shell
		if shell == "" {
			shell = "bash"
		}
		sh, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("%s is not installed: %q not run", shell, d.cmd)
			continue
		}
		if _, err := exec.LookPath(d.needs); d.needs != "" && err != nil {
			t.Logf("%s is not installed (.ci/run installs it): %q not run", d.needs, d.cmd)
			continue
		}
		dir, ok := dirs[d.dir]
		if !ok {
			dir = docDir(t, d.dir)
			dirs[d.dir] = dir
		}
		cmd := strings.NewReplacer("<run id>", "$RUN_ID", "<id>", "$RUN_ID", "/abs/", "$PWD/").Replace(d.cmd)
		script := d.pre + "\n" + `RUN_ID=${RUN_ID:-$(ls .runner/runs 2>/dev/null | head -1)}
` + cmd + "\ncode=$?\n"
		if shell == "fish" {
			script = d.pre + cmd + "\nset code $status\n"
		}
		if d.after != "" {
			script += d.after + " >&2 || { echo 'after failed: " + strings.ReplaceAll(d.after, "'", "") + "' >&2; exit 99; }\n"
		}
		script += "exit $code\n"
		args := []string{"-c", script}
		switch shell {
		case "bash":
			args = append([]string{"--norc", "--noprofile"}, args...)
		case "zsh":
			args = append([]string{"-f"}, args...)
		case "fish":
			args = append([]string{"--no-config"}, args...)
		}
		c := exec.CommandContext(t.Context(), sh, args...)
		c.Dir = dir
		c.Env = docEnv(path, dir)
		out, err := c.CombinedOutput()
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			t.Fatalf("%s: %v", shell, err)
		}
		if code := c.ProcessState.ExitCode(); code != d.exit {
			t.Errorf("%s: exit %d, want %d\n%s", d.cmd, code, d.exit, out)
			continue
		}
		if d.want != "" && !regexp.MustCompile(d.want).Match(out) {
			t.Errorf("%s: output does not match %q:\n%s", d.cmd, d.want, out)
		}
	}
}

// docEnv is the environment the commands run with: this runner on PATH,
// a private HOME, no model keys.
func docEnv(path, dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasPrefix(k, "GITHUB_") || k == "PATH" || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	cache, err := os.UserCacheDir()
	if err == nil && os.Getenv("GOCACHE") == "" {
		env = append(env, "GOCACHE="+filepath.Join(cache, "go-build")) // HOME moves; Go's cache stays
	}
	return append(env, "PATH="+filepath.Join(dir, "bin")+string(os.PathListSeparator)+path, "HOME="+filepath.Join(dir, ".home"))
}

// docDir makes the work dir a group of docCommands runs in:
//   - checkout: the Makefile and examples/ committed to a new repository,
//     bin/runner this test binary (make demo's build is skipped);
//   - project: examples/hello/project as a repository of its own, with the
//     hello task and its cassette;
//   - stdin: the hello task, and generate-spec printing it;
//   - "": an empty dir.
func docDir(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mustRun := func(args ...string) {
		t.Helper()
		c := exec.CommandContext(t.Context(), args[0], args[1:]...)
		c.Dir = dir
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	write := func(name, body string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	copyFile := func(from, to string) {
		t.Helper()
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		write(to, string(data), 0o644)
	}
	switch name {
	case "checkout":
		if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS("../../examples")); err != nil {
			t.Fatal(err)
		}
		copyFile("../../Makefile", "Makefile")
		mustRun("git", "init", "-q")
		mustRun("git", "add", "-A")
		mustRun("git", "commit", "-qm", "checkout")
		if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(self, filepath.Join(dir, "bin", "runner")); err != nil {
			t.Fatal(err)
		}
	case "project":
		if err := os.CopyFS(dir, os.DirFS("../../examples/hello/project")); err != nil {
			t.Fatal(err)
		}
		copyFile("../../examples/hello/task.yaml", "task.yaml")
		copyFile("../../examples/hello/session.jsonl", "session.jsonl")
		write(".gitignore", "/task.yaml\n/session.jsonl\n/.home/\n", 0o644)
		mustRun("git", "init", "-q")
		mustRun("git", "add", "-A")
		mustRun("git", "commit", "-qm", "project")
	case "stdin":
		copyFile("../../examples/hello/task.yaml", "task.yaml")
		write("bin/generate-spec", "#!/bin/sh\ncat task.yaml\n", 0o755)
	}
	return dir
}
