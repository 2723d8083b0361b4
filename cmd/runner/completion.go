package main

import (
	"embed"
	"fmt"
	"slices"

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
		return fmt.Errorf("%w: help: %w (runner --help lists the commands)", pipeline.ErrUsage, err)
	}
	return nil
}
