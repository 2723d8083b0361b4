package main

import (
	"context"
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

// Run writes the step's outputs from the event log, then updates the
// sticky comment; an API failure is reported (exit 3) but cannot lose the
// outputs. Outside GitHub Actions it does nothing and exits 2; without a
// token it writes the outputs, calls no API and exits 2.
func (c *GitHubFinalizeCmd) Run(ctx context.Context, streams Streams, env Environ) error {
	environ := env.Map()
	genv, err := github.LoadEnv(environ)
	if err != nil {
		return err
	}
	if !genv.Actions {
		return fmt.Errorf("%w: not running in GitHub Actions (GITHUB_ACTIONS is not \"true\"): nothing to finalize; see `runner report` for a local summary", pipeline.ErrUsage)
	}
	ev, err := github.Load(ctx, genv, nil) // nil client: no API call
	if err != nil {
		return err
	}
	var open func(context.Context) (*github.Sticky, error)
	var noToken error
	switch {
	case c.Comment == "false":
	case ev.GitHub.Number <= 0:
		fmt.Fprintf(streams.Stderr, "runner: %v: %s event: no comment to update\n", github.ErrNoNumber, ev.GitHub.EventName)
	case genv.Token == "":
		noToken = fmt.Errorf("%w: %w: the comment was not updated; set GITHUB_TOKEN (the action's github-token input, e.g. ${{ github.token }}) or pass --comment=false", pipeline.ErrUsage, github.ErrNoToken)
	default:
		open = func(ctx context.Context) (*github.Sticky, error) {
			client, err := github.NewClient(genv, runnerHTTPClient())
			if err != nil {
				return nil, err
			}
			a := &github.Actions{Env: genv, Client: client, Event: ev, Self: environ["RUNNER_GITHUB_LOGIN"]}
			return a.Sticky(ctx, c.Task)
		}
	}
	out, err := github.Finalize(ctx, github.FinalizeOptions{
		EventsFile: c.Events, OpenSticky: open, CreateMissing: c.Create, OutputPath: genv.Output, SummaryPath: genv.StepSummary,
		Render: func(ctx context.Context, events string) (string, error) {
			return runreport.MarkdownFile(ctx, events, runreport.MarkdownOptions{MaxLen: runreport.GitHubCommentMax})
		},
	})
	if out.CommentURL != "" {
		fmt.Fprintln(streams.Stdout, out.CommentURL)
	}
	if err != nil {
		return err
	}
	return noToken
}
