package report

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/seed43ef5acb/runner/runner/event"
)

// Size limits of the places a report is published to.
const (
	// GitHubCommentMax is the longest issue or PR comment body GitHub takes.
	GitHubCommentMax = 65536
	// StepSummaryMax is the most GitHub shows of a job's step summary.
	StepSummaryMax = 1 << 20
)

// Output formats of Render.
const (
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Load reads event logs (a truncated last line is tolerated) and builds one
// Report per run, in order: the core of `runner report EVENTS.jsonl...`.
func Load(ctx context.Context, paths ...string) ([]Report, error) {
	var all []event.Record
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("load reports: %w", err)
		}
		recs, err := readLogFile(p, p)
		if err != nil {
			return nil, fmt.Errorf("load reports: %w", err)
		}
		all = append(all, recs...)
	}
	return BuildRuns(all)
}

// readLogFile reads the event log at path (a truncated last line is
// tolerated). A log without records is ErrNoEvents. Errors other than
// opening the file are prefixed with name.
func readLogFile(path, name string) ([]event.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadLog(f, name)
}

// ReadLog reads one event log from r as Load reads a file (stdin for
// `runner report -`); errors are prefixed with name.
func ReadLog(r io.Reader, name string) ([]event.Record, error) {
	recs, cut, err := event.ReadLogCut(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(recs) == 0 && cut > 0 {
		return nil, fmt.Errorf("%s: %w", name, cutLogError{line: cut})
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrNoEvents)
	}
	return recs, nil
}

// cutLogError is a log with no whole event whose last line is cut before
// its newline (a run killed while writing it, a copy cut short): it is
// ErrNoEvents, said as what happened.
type cutLogError struct{ line int }

func (e cutLogError) Error() string {
	return fmt.Sprintf("line %d is incomplete (cut off before its newline, as a run killed mid-write or a copy cut short leaves it) "+
		"and the log holds no whole event before it", e.line)
}

// Is makes the error ErrNoEvents.
func (cutLogError) Is(target error) bool { return target == ErrNoEvents }

// Render formats reports as "markdown" (documents separated by a rule) or
// "json" (one object for one report, an array for several). Other formats
// wrap ErrFormat.
func Render(reports []Report, format string, o MarkdownOptions) ([]byte, error) {
	switch format {
	case FormatMarkdown, "md", "":
		docs := make([]string, len(reports))
		for i, r := range reports {
			docs[i] = r.Markdown(o)
		}
		return []byte(strings.Join(docs, "\n---\n\n")), nil
	case FormatJSON:
		if len(reports) == 1 {
			return reports[0].JSON()
		}
		if reports == nil {
			reports = []Report{}
		}
		b, err := marshalIndent(reports)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	return nil, fmt.Errorf("%w %q (want markdown or json)", ErrFormat, format)
}

// MarkdownFile renders the event log at path as Markdown: the shape of the
// github package's Renderer (PR comment, step summary), for example
//
//	func(ctx context.Context, f string) (string, error) {
//		return report.MarkdownFile(ctx, f, report.MarkdownOptions{MaxLen: report.GitHubCommentMax})
//	}
//
// With several runs in the file, MaxLen applies to each document.
func MarkdownFile(ctx context.Context, path string, o MarkdownOptions) (string, error) {
	reps, err := Load(ctx, path)
	if err != nil {
		return "", err
	}
	md, err := Render(reps, FormatMarkdown, o)
	if err != nil {
		return "", err
	}
	return string(md), nil
}
