package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed43ef5acb/runner/github"
	"github.com/seed43ef5acb/runner/pipeline"
	runreport "github.com/seed43ef5acb/runner/runner/report"
)

// GitHubCmd groups the GitHub Actions commands.
type GitHubCmd struct {
	Finalize GitHubFinalizeCmd `cmd:"" help:"Update the run's sticky comment from its event log (the action's if: cancelled() || failure() step)."`
}

// GitHubFinalizeCmd is `runner github finalize --events FILE`.
type GitHubFinalizeCmd struct {
	Events  string `help:"The run's events.jsonl." required:"" placeholder:"FILE" type:"existingfile"`
	Task    string `help:"Task name of the sticky comment (default: the task in the events)." placeholder:"NAME"`
	Create  bool   `help:"Post the comment when the run never did (by default only a comment the run started is updated)."`
	Comment string `help:"\"false\" leaves the comment alone (outputs are still written); the action's comment input." env:"RUNNER_COMMENT" enum:"true,false," default:"" placeholder:"BOOL"`
}

// Run updates the sticky comment and writes the step's outputs. Outside
// GitHub Actions it does nothing and exits 2.
func (c *GitHubFinalizeCmd) Run(ctx context.Context, streams Streams, env Environ) error {
	a, err := github.Setup(ctx, env.Map(), nil)
	if err != nil {
		return err
	}
	if a == nil {
		return fmt.Errorf("%w: not running in GitHub Actions (GITHUB_ACTIONS is not \"true\"): nothing to finalize; see `runner report` for a local summary", pipeline.ErrUsage)
	}
	var sticky *github.Sticky
	if c.Comment != "false" {
		sticky, err = a.Sticky(ctx, c.Task)
		if errors.Is(err, github.ErrNoNumber) {
			fmt.Fprintf(streams.Stderr, "runner: %v: no comment to update\n", err)
		} else if err != nil {
			return err
		}
	}
	out, err := github.Finalize(ctx, github.FinalizeOptions{
		EventsFile: c.Events, Sticky: sticky, CreateMissing: c.Create, OutputPath: a.Env.Output,
		Render: func(ctx context.Context, events string) (string, error) {
			return runreport.MarkdownFile(ctx, events, runreport.MarkdownOptions{MaxLen: runreport.GitHubCommentMax})
		},
	})
	if out.CommentURL != "" {
		fmt.Fprintln(streams.Stdout, out.CommentURL)
	}
	return err
}
