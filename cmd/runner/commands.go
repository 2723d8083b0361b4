package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/alecthomas/kong"
	mangokong "github.com/alecthomas/mango-kong"
	"github.com/muesli/roff"

	"github.com/seed43ef5acb/runner/internal/workflowcmd"
	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/batch"
	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// ValidateCmd is `runner validate TASK.yaml...`.
type ValidateCmd struct {
	Files []string `arg:"" name:"TASK.yaml" help:"Task spec or batch spec files (- for stdin)."`
}

// Run loads every file and reports all problems of all files (exit 2).
// Under GitHub Actions each problem is also an ::error annotation on
// stdout, at its file, line and column.
func (c *ValidateCmd) Run(ctx context.Context, streams Streams, env Environ) error {
	var errs []error
	var ann *workflowcmd.Writer
	if env.Get("GITHUB_ACTIONS") == "true" {
		ann = &workflowcmd.Writer{W: streams.Stdout}
	}
	if err := oneStdin(c.Files...); err != nil {
		return err
	}
	for _, f := range c.Files {
		name, warns, err := loadSpec(ctx, streams, f)
		if err := warnSpec(streams, ann, warns); err != nil {
			return err
		}
		if err != nil {
			errs = append(errs, err)
			if err := annotateSpecErr(ann, name, err); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(streams.Stdout, "%s: ok\n", name)
	}
	return errors.Join(errs...)
}

// warnSpec prints warnings (problems that do not stop a run) on stderr
// at their position, and as ::warning annotations under Actions (ann set).
func warnSpec(streams Streams, ann *workflowcmd.Writer, warns spec.Errors) error {
	for _, w := range warns {
		fmt.Fprintf(streams.Stderr, "%s:%d:%d: warning: %s\n", w.File, w.Line, w.Col, w.Msg)
		if err := ann.Annotate(workflowcmd.Annotation{Level: workflowcmd.Warning, File: w.File, Line: w.Line, Col: w.Col,
			Title: "runner validate", Message: w.Msg}); err != nil {
			return err
		}
	}
	return nil
}

// annotateSpecErr writes one ::error annotation per problem of err, the
// error of validating file: positioned spec errors at their position,
// anything else on the file.
func annotateSpecErr(w *workflowcmd.Writer, file string, err error) error {
	const title = "runner validate"
	var es spec.Errors
	var e *spec.Error
	switch {
	case errors.As(err, &es):
	case errors.As(err, &e):
		es = spec.Errors{e}
	default:
		return w.Annotate(workflowcmd.Annotation{Level: workflowcmd.Error, File: file, Title: title, Message: err.Error()})
	}
	for _, e := range es {
		msg := e.Msg
		if e.Hint != "" {
			msg += " (" + e.Hint + ")"
		}
		a := workflowcmd.Annotation{Level: workflowcmd.Error, File: e.File, Line: e.Line, Col: e.Col, Title: title, Message: msg}
		if err := w.Annotate(a); err != nil {
			return err
		}
	}
	return nil
}

// loadSpec loads a task spec and checks it as exec would with its own
// model (pipeline.CheckSpec), or a batch spec when the file has "repos" or
// "repos_file"; both report spec.Errors (exit 2). Path "-" reads stdin,
// named "<stdin>" (a batch spec's paths are then relative to the working
// directory); name is what errors call the input. warns are problems
// that do not stop a run (an unknown model, no tool allowed).
func loadSpec(ctx context.Context, streams Streams, path string) (name string, warns spec.Errors, err error) {
	if err := notASpec(path); err != nil {
		return path, nil, err
	}
	name, data, err := readInput(streams, path, "TASK.yaml")
	if err != nil {
		return name, nil, specReadErr(path, err)
	}
	if batch.LooksLikeBatch(data) {
		dir := path
		if path == "-" {
			dir = "."
		}
		if dir, err = filepath.Abs(dir); err != nil {
			return name, nil, fmt.Errorf("batch spec path: %w", err)
		}
		if path != "-" {
			dir = filepath.Dir(dir)
		}
		// The repositories and the task are checked even when the batch
		// spec has errors, so one pass shows every problem.
		s, err := batch.LoadSpecPartial(name, dir, data)
		if s == nil {
			return name, nil, err
		}
		return name, nil, joinProblems(err, batch.Check(ctx, s, nil))
	}
	task, err := spec.LoadPartial(name, data)
	if task == nil {
		return name, nil, err
	}
	if w := pipeline.UnknownSpecModel(task); w != nil {
		warns = append(warns, w)
	}
	if w := pipeline.IgnoredSpecEffort(task); w != nil {
		warns = append(warns, w)
	}
	err = joinProblems(err, pipeline.CheckSpec(task))
	if w := pipeline.NoToolSpec(task); w != nil && err == nil { // a broken spec's errors come first
		warns = append(warns, w)
	}
	return name, warns, err
}

// joinProblems merges the problems of two checks of one file: positioned
// spec errors into one list in file order, anything else joined.
func joinProblems(a, b error) error {
	var sa, sb spec.Errors
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case errors.As(a, &sa) && errors.As(b, &sb):
		return append(append(spec.Errors{}, sa...), sb...).Sorted()
	}
	return errors.Join(a, b)
}

// SchemaCmd is `runner schema [--batch]`.
type SchemaCmd struct {
	Batch bool `help:"Print the batch spec's schema (schema/batch.schema.json) instead."`
}

// Run prints the task spec's JSON Schema, or the batch spec's.
func (c *SchemaCmd) Run(streams Streams) error {
	if c.Batch {
		_, err := streams.Stdout.Write(batch.Schema())
		return err
	}
	_, err := streams.Stdout.Write(spec.TaskSchema())
	return err
}

// ManCmd is `runner man`, hidden: the release archives' man page,
// runner.1, generated from the commands and flags (mango-kong).
type ManCmd struct{}

// Run writes the man page in roff to stdout.
func (c *ManCmd) Run(kctx *kong.Context, streams Streams) error {
	page := mangokong.NewManPage(1, kctx.Model)
	page = page.WithSection("Exit status", exitStatus)
	page = page.WithSection("See also", "https://github.com/seed43ef5acb/runner (README.md and docs/)")
	_, err := fmt.Fprint(streams.Stdout, page.Build(roff.NewDocument()))
	return err
}

// exitStatus is the man page's EXIT STATUS section.
const exitStatus = `0 success; 1 the task failed; 2 bad usage or an invalid spec; ` +
	`3 a provider or infrastructure error, or (exec in GitHub Actions) the delivery failed; 130 cancelled.`

// VersionCmd is `runner version`.
type VersionCmd struct{}

// Run prints the version.
func (c *VersionCmd) Run(streams Streams) error {
	_, err := fmt.Fprintf(streams.Stdout, "runner %s\n", pipeline.Version())
	return err
}
