package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/runner/event"
	runreport "github.com/seed43ef5acb/runner/runner/report"
)

// ReportCmd is `runner report EVENTS.jsonl...`. One log of a run that
// continued others (exec --continue) is reported with the runs before it,
// found through run.started's continues, as one conversation.
type ReportCmd struct {
	Events []string `arg:"" name:"EVENTS.jsonl" help:"Event logs (runner exec's events.jsonl; - for stdin); one report per run." type:"existingfile"`
	Format string   `help:"Output format: markdown or json (default ${default})." default:"markdown" enum:"markdown,json" placeholder:"FORMAT"`
	// NoChain reports one log alone, even when its run continued others.
	NoChain bool `name:"no-chain" help:"With one log of a continued run (exec --continue), report that run alone instead of the whole conversation."`
}

// Run loads the logs and prints the reports on stdout.
func (c *ReportCmd) Run(ctx context.Context, streams Streams) error {
	if err := oneStdin(c.Events...); err != nil {
		return err
	}
	load := runreport.Load
	switch {
	case slices.Contains(c.Events, "-"):
		load = func(ctx context.Context, paths ...string) ([]runreport.Report, error) {
			return loadWithStdin(streams, paths)
		}
	case len(c.Events) == 1 && !c.NoChain:
		load = func(ctx context.Context, paths ...string) ([]runreport.Report, error) {
			return runreport.LoadChain(ctx, paths[0])
		}
	}
	reports, err := load(ctx, c.Events...)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", pipeline.ErrUsage, err)
	}
	if errors.Is(err, runreport.ErrNoEvents) || errors.Is(err, event.ErrMalformed) || errors.Is(err, event.ErrVersion) {
		return fmt.Errorf("%w: %w", pipeline.ErrUsage, err) // the input is wrong, not the machinery: exit 2
	}
	if err != nil {
		return err
	}
	if c.Format == runreport.FormatMarkdown && len(c.Events) == 1 {
		_, err = fmt.Fprint(streams.Stdout, runreport.ChainMarkdown(reports, runreport.MarkdownOptions{}))
		return err
	}
	out, err := runreport.Render(reports, c.Format, runreport.MarkdownOptions{})
	if err != nil {
		return err
	}
	_, err = streams.Stdout.Write(out)
	return err
}

// loadWithStdin loads the logs at paths as runreport.Load does, "-" read
// from stdin and named "<stdin>"; a log read from stdin is never chained
// (its earlier runs' out dirs cannot be found from it).
func loadWithStdin(streams Streams, paths []string) ([]runreport.Report, error) {
	var all []event.Record
	for _, p := range paths {
		recs, err := readLog(streams, p)
		if err != nil {
			return nil, fmt.Errorf("load reports: %w", err)
		}
		all = append(all, recs...)
	}
	return runreport.BuildRuns(all)
}

// readLog reads one event log, from stdin for "-".
func readLog(streams Streams, path string) ([]event.Record, error) {
	if path == "-" {
		data, err := readStdin(streams, "EVENTS.jsonl")
		if err != nil {
			return nil, err
		}
		return runreport.ReadLog(bytes.NewReader(data), stdinName)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return runreport.ReadLog(f, path)
}
