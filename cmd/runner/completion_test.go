package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// runnerOnPath puts a "runner" on PATH that is this test binary (TestMain
// runs it as the runner), so shells and scripts call it by name.
func runnerOnPath(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "runner")); err != nil {
		t.Fatal(err)
	}
	return bin + string(os.PathListSeparator) + os.Getenv("PATH")
}

// TestCompletionInShells loads each shell's script in the real shell and
// completes a subcommand and a flag through it.
func TestCompletionInShells(t *testing.T) {
	path := runnerOnPath(t)
	// Each case loads the script from `runner completion SHELL` and asks
	// the shell's completion for "runner ex" and "runner batch run --sh".
	cases := []struct {
		shell string
		args  []string
	}{
		{"bash", []string{"--norc", "--noprofile", "-c", `source <(runner completion bash) || exit 1
complete -p runner || exit 1
for line in "runner ex" "runner batch run --sh"; do
	COMP_LINE=$line COMP_POINT=${#line} _runner_complete
	printf '%s\n' "${COMPREPLY[@]}"
done`}},
		// compadd only works inside a completion widget: stand-ins print
		// what the script offers, after compinit registered it.
		{"zsh", []string{"-f", "-c", `autoload -U compinit && compinit -u -D || exit 1
source <(runner completion zsh) || exit 1
[[ $_comps[runner] == _runner ]] || { print "not registered: $_comps[runner]"; exit 1 }
compadd() { print -l -- "${@[$(( ${@[(i)--]} + 1 )),-1]}" }
_files() { print FILES }
words=(runner ex); CURRENT=2; _runner
words=(runner batch run --sh); CURRENT=4; _runner`}},
		{"fish", []string{"--no-config", "-c", `runner completion fish | source; or exit 1
complete -C"runner ex"
complete -C"runner batch run --sh"`}},
	}
	for _, c := range cases {
		t.Run(c.shell, func(t *testing.T) {
			sh, err := exec.LookPath(c.shell)
			if err != nil {
				t.Skipf("%s is not installed (.ci/run installs it with apt-get)", c.shell)
			}
			cmd := exec.CommandContext(t.Context(), sh, c.args...)
			cmd.Env = append(os.Environ(), "PATH="+path, "HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", c.shell, err, out)
			}
			got := strings.Fields(string(out))
			for _, want := range []string{"exec", "--shard", "--shards"} {
				if !slices.Contains(got, want) {
					t.Errorf("%s completion lacks %q; it printed:\n%s", c.shell, want, out)
				}
			}
			if slices.Contains(got, "FILES") || slices.Contains(got, "--max-steps") {
				t.Errorf("%s completion offered more than the matches:\n%s", c.shell, out)
			}
		})
	}
}

// visibleCommands walks the kong model: every visible command, as its
// words without the "runner", the root first.
func visibleCommands(t *testing.T) []*kong.Node {
	t.Helper()
	var cli CLI
	parser, err := newParser(context.Background(), &cli, Streams{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*kong.Node
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		nodes = append(nodes, n)
		for _, c := range n.Children {
			if c.Type == kong.CommandNode && !c.Hidden {
				walk(c)
			}
		}
	}
	walk(parser.Model.Node)
	return nodes
}

// commandWords are a node's command words: "batch run" is [batch run].
func commandWords(n *kong.Node) []string {
	if n.Parent == nil {
		return nil
	}
	return strings.Fields(n.Path())
}

// TestCompletionCoversEveryCommand: completion offers every visible
// subcommand and every visible flag of every command.
func TestCompletionCoversEveryCommand(t *testing.T) {
	complete := func(line string) []string {
		t.Helper()
		t.Setenv("COMP_LINE", line)
		t.Setenv("COMP_POINT", "")
		var stdout, stderr bytes.Buffer
		env := []string{"COMP_LINE=" + line}
		if code := runCLI(context.Background(), []string{"ignored"}, Streams{Stdout: &stdout, Stderr: &stderr}, env); code != 0 {
			t.Fatalf("COMP_LINE=%q: exit %d, stderr %q", line, code, stderr.String())
		}
		return strings.Fields(stdout.String())
	}
	for _, n := range visibleCommands(t) {
		prefix := strings.Join(append([]string{"runner"}, commandWords(n)...), " ") + " "
		subs := complete(prefix)
		for _, c := range n.Children {
			if c.Type == kong.CommandNode && !c.Hidden && !slices.Contains(subs, c.Name) {
				t.Errorf("completing %q does not offer the command %q (got %q)", prefix, c.Name, subs)
			}
		}
		flags := complete(prefix + "--")
		for _, f := range n.Flags {
			if !f.Hidden && !slices.Contains(flags, "--"+f.Name) {
				t.Errorf("completing %q does not offer the flag --%s (got %q)", prefix+"--", f.Name, flags)
			}
		}
	}
}

// TestHelpCommand: `runner help CMD...` prints what `runner CMD... --help`
// prints, for every command; an unknown command is a usage error.
func TestHelpCommand(t *testing.T) {
	run := func(args ...string) (string, int) {
		var stdout, stderr bytes.Buffer
		code := runCLI(context.Background(), args, Streams{Stdout: &stdout, Stderr: &stderr}, nil)
		return stdout.String() + stderr.String(), code
	}
	for _, n := range visibleCommands(t) {
		words := commandWords(n)
		want, code := run(append(slices.Clone(words), "--help")...)
		if code != 0 {
			t.Fatalf("runner %v --help: exit %d", words, code)
		}
		got, code := run(append([]string{"help"}, words...)...)
		if code != 0 || got != want {
			t.Errorf("runner help %s: exit %d, output differs from --help:\n%s", strings.Join(words, " "), code, got)
		}
	}
	// An unknown command is named, with the commands there are at the
	// deepest level the words reached.
	for _, c := range []struct{ words, want string }{
		{"nope", `unexpected argument nope (runner has the commands batch, completion, exec, `},
		{"batch nope", `unexpected argument nope (runner batch has the commands `},
	} {
		out, code := run(append([]string{"help"}, strings.Fields(c.words)...)...)
		if code != 2 || !strings.Contains(out, c.want) || !strings.Contains(out, "--help describes them") {
			t.Errorf("runner help %s: exit %d, %q; want exit 2 and %q", c.words, code, out, c.want)
		}
	}
	// A typo gets kong's suggestion, as it does without help.
	for _, c := range []struct{ words, want string }{
		{"exce", `unexpected argument exce, did you mean "exec"?`},
		{"batch rnu", `unexpected argument rnu, did you mean "run"?`},
	} {
		out, code := run(append([]string{"help"}, strings.Fields(c.words)...)...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("runner help %s: exit %d, %q; want exit 2 and %q", c.words, code, out, c.want)
		}
	}
}
