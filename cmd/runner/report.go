package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/runner/event"
	runreport "github.com/seed43ef5acb/runner/runner/report"
)

// ReportCmd is `runner report EVENTS.jsonl...`.
type ReportCmd struct {
	Events []string `arg:"" name:"EVENTS.jsonl" help:"Event logs (runner exec's events.jsonl); one report per run." type:"existingfile"`
	Format string   `help:"Output format: markdown or json (default ${default})." default:"markdown" enum:"markdown,json" placeholder:"FORMAT"`
}

// Run loads the logs and prints the reports on stdout.
func (c *ReportCmd) Run(ctx context.Context, streams Streams) error {
	reports, err := runreport.Load(ctx, c.Events...)
	if errors.Is(err, runreport.ErrNoEvents) || errors.Is(err, event.ErrMalformed) || errors.Is(err, event.ErrVersion) {
		return fmt.Errorf("%w: %w", pipeline.ErrUsage, err) // the input is wrong, not the machinery: exit 2
	}
	if err != nil {
		return err
	}
	out, err := runreport.Render(reports, c.Format, runreport.MarkdownOptions{})
	if err != nil {
		return err
	}
	_, err = streams.Stdout.Write(out)
	return err
}
