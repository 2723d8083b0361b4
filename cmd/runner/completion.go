package main

import (
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/willabides/kongplete"

	"github.com/seed43ef5acb/runner/pipeline"
)

// completionScripts are the shell scripts `runner completion SHELL` prints.
// Each hands the command line to the runner in COMP_LINE and offers what
// it prints (kongplete, from the same kong model as --help).
//
//go:embed completion/runner.bash completion/runner.zsh completion/runner.fish
var completionScripts embed.FS

// CompletionCmd is `runner completion bash|zsh|fish`.
type CompletionCmd struct {
	Shell string `arg:"" name:"SHELL" help:"The shell: bash, zsh or fish." enum:"bash,zsh,fish"`
}

// Help is the text under the command's usage in --help.
func (c *CompletionCmd) Help() string {
	return `Load it in the current shell:

  bash: source <(runner completion bash)
  zsh:  source <(runner completion zsh)   (after compinit)
  fish: runner completion fish | source

Add that line to ~/.bashrc, ~/.zshrc or ~/.config/fish/config.fish to keep it. The runner must be on PATH.`
}

// Run prints the script for the shell.
func (c *CompletionCmd) Run(streams Streams) error {
	script, err := completionScripts.ReadFile("completion/runner." + c.Shell)
	if err != nil {
		return fmt.Errorf("completion script for %s: %w", c.Shell, err)
	}
	_, err = streams.Stdout.Write(script)
	return err
}

// complete answers a shell's completion request, made by the scripts
// above with COMP_LINE set, and exits through the parser's Exit.
func complete(parser *kong.Kong) {
	kongplete.Complete(parser)
}

// HelpCmd is `runner help [COMMAND...]`: the same help as `runner
// COMMAND --help`.
type HelpCmd struct {
	Command []string `arg:"" optional:"" name:"COMMAND" help:"The command to describe, such as: batch run."`
}

// Run parses the command words with --help, which prints the help and
// exits 0; an unknown command is a usage error (exit 2).
func (c *HelpCmd) Run(kctx *kong.Context) error {
	if _, err := kctx.Kong.Parse(append(slices.Clone(c.Command), "--help")); err != nil {
		node, words := kctx.Model.Node, []string{"runner"}
		for _, w := range c.Command {
			child := subcommand(node, w)
			if child == nil {
				break
			}
			node, words = child, append(words, w)
		}
		at := strings.Join(words, " ")
		if names := subcommandNames(node); len(names) > 0 {
			return fmt.Errorf("%w: help: %w (%s has the commands %s; %s --help describes them)",
				pipeline.ErrUsage, err, at, strings.Join(names, ", "), at)
		}
		return fmt.Errorf("%w: help: %w (%s --help describes it)", pipeline.ErrUsage, err, at)
	}
	return nil
}

// subcommand is the visible command of n named or aliased name, or nil.
func subcommand(n *kong.Node, name string) *kong.Node {
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && !c.Hidden && (c.Name == name || slices.Contains(c.Aliases, name)) {
			return c
		}
	}
	return nil
}

// subcommandNames are the names of n's visible commands, sorted.
func subcommandNames(n *kong.Node) []string {
	var names []string
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			names = append(names, c.Name)
		}
	}
	slices.Sort(names)
	return names
}
