package sandbox_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// runIn runs argv with Start (the zygote unless the policy pins helpers)
// and returns its output (stdout and stderr), its exit code and how it was
// started.
func runIn(t *testing.T, ctx context.Context, sb *sandbox.Sandbox, argv []string, dir string, env []string) (string, int, sandbox.Launch) {
	t.Helper()
	return runInCtx(t, ctx, sb, argv, dir, env, nil)
}

// runInWith is runIn with the test's context, calling seen with the
// started process.
func runInWith(t *testing.T, sb *sandbox.Sandbox, argv []string, dir string, env []string, seen func(*sandbox.Process)) (string, int, sandbox.Launch) {
	t.Helper()
	return runInCtx(t, t.Context(), sb, argv, dir, env, seen)
}

func runInCtx(t *testing.T, ctx context.Context, sb *sandbox.Sandbox, argv []string, dir string, env []string, seen func(*sandbox.Process)) (string, int, sandbox.Launch) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	p, err := sb.Start(ctx, argv, dir, env, sandbox.Stdio{Stdout: pw, Stderr: pw})
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	if seen != nil {
		seen(p)
	}
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&out, pr); close(copied) }()
	code, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	<-copied
	if p.Note() != "" {
		t.Logf("launch note: %s", p.Note())
	}
	return out.String(), code, p.Launch()
}

// launchSets are both ways a sandboxed command starts.
func launchSets() map[string]bool { return map[string]bool{"zygote": false, "helper": true} }

// TestZygoteCommands: commands run one after the other in the zygote, each
// with its own argv, directory, environment and stdin, with the exit codes
// a shell gives, and the zygote is reused.
func TestZygoteCommands(t *testing.T) {
	for name, layers := range layerSets() {
		t.Run(name, func(t *testing.T) {
			requireLayers(t, layers)
			tree := t.TempDir()
			if err := os.Mkdir(filepath.Join(tree, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, Layers: layers})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			path := "PATH=" + os.Getenv("PATH")
			for i, c := range []struct {
				argv []string
				dir  string
				env  []string
				want string
				code int
			}{
				{[]string{"bash", "-c", `echo "$A" $(pwd)`}, tree, []string{path, "A=one"}, "one " + tree + "\n", 0},
				{[]string{"bash", "-c", `echo "$A" $(pwd); exit 3`}, filepath.Join(tree, "sub"), []string{path, "A=two"}, "two " + tree + "/sub\n", 3},
				{[]string{"bash", "-c", `kill -9 $$`}, tree, []string{path}, "", -1},
				{[]string{"no-such-command-here"}, tree, []string{path}, "runner sandbox: exec: \"no-such-command-here\": executable file not found in $PATH\n", 127},
				{[]string{"/bin/true"}, tree, nil, "", 0},
			} {
				out, code, launch := runIn(t, t.Context(), sb, c.argv, c.dir, c.env)
				if out != c.want || code != c.code || launch != sandbox.LaunchZygote {
					t.Errorf("command %d: %q exit %d via %s; want %q exit %d via zygote", i, out, code, launch, c.want, c.code)
				}
			}
			in, err := os.Open(filepath.Join("testdata", "stdin.txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var out bytes.Buffer
			pr, pw, _ := os.Pipe()
			p, err := sb.Start(t.Context(), []string{"cat"}, tree, []string{path}, sandbox.Stdio{Stdin: in, Stdout: pw})
			pw.Close()
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(&out, pr)
			if code, err := p.Wait(); code != 0 || err != nil || out.String() != "stdin of the command\n" {
				t.Errorf("stdin: %q exit %d %v", out.String(), code, err)
			}
		})
	}
}

// TestZygoteCancel: cancelling a command's context kills it and what it
// started in the background; the zygote then runs the next command.
func TestZygoteCancel(t *testing.T) {
	for name, layers := range layerSets() {
		t.Run(name, func(t *testing.T) {
			requireLayers(t, layers)
			tree := t.TempDir()
			sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, Layers: layers})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			out, code, _ := runIn(t, ctx, sb, []string{"bash", "-c", "setsid sleep 60 & sleep 60; echo not killed"}, tree, []string{"PATH=" + os.Getenv("PATH")})
			if code != -1 || strings.Contains(out, "not killed") || time.Since(start) > 30*time.Second {
				t.Errorf("cancelled command: %q exit %d after %s", out, code, time.Since(start))
			}
			out, code, _ = runIn(t, t.Context(), sb, []string{"bash", "-c", "echo next"}, tree, []string{"PATH=" + os.Getenv("PATH")})
			if out != "next\n" || code != 0 {
				t.Errorf("the command after a cancel: %q exit %d", out, code)
			}
		})
	}
}

// TestZygoteStoppedByCommand: a command that stops its zygote (SIGSTOP:
// delivered with Landlock alone, dropped with namespaces) still ends at
// its timeout, and the next command runs.
func TestZygoteStoppedByCommand(t *testing.T) {
	for name, layers := range layerSets() {
		t.Run(name, func(t *testing.T) {
			requireLayers(t, layers)
			tree := t.TempDir()
			sb, err := sandbox.New(sandbox.Policy{WorkTree: tree, Layers: layers})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			p, err := sb.Start(ctx, []string{"bash", "-c", "kill -STOP $PPID; sleep 60"}, tree, []string{"PATH=" + os.Getenv("PATH")}, sandbox.Stdio{})
			if err != nil {
				t.Fatal(err)
			}
			code, _ := p.Wait()
			if code != -1 || time.Since(start) > 20*time.Second {
				t.Errorf("the command that stopped its zygote: exit %d after %s", code, time.Since(start))
			}
			out, code, _ := runIn(t, t.Context(), sb, []string{"bash", "-c", "echo next"}, tree, []string{"PATH=" + os.Getenv("PATH")})
			if out != "next\n" || code != 0 {
				t.Errorf("the command after: %q exit %d", out, code)
			}
		})
	}
}
