package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/seed43ef5acb/runner/pipeline"
	"github.com/seed43ef5acb/runner/pipeline/batch"
	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// ValidateCmd is `runner validate TASK.yaml...`.
type ValidateCmd struct {
	Files []string `arg:"" name:"TASK.yaml" help:"Task spec or batch spec files."`
}

// Run loads every file and reports all problems of all files (exit 2).
func (c *ValidateCmd) Run(ctx context.Context, streams Streams) error {
	var errs []error
	for _, f := range c.Files {
		if err := loadSpec(ctx, f); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(streams.Stdout, "%s: ok\n", f)
	}
	return errors.Join(errs...)
}

// loadSpec loads a task spec and checks it as exec would with its own
// model (pipeline.CheckSpec), or a batch spec when the file has "repos" or
// "repos_file"; both report spec.Errors (exit 2).
func loadSpec(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: read spec: %w", pipeline.ErrUsage, err)
	}
	if batch.LooksLikeBatch(data) {
		var s *batch.Spec
		if s, err = batch.LoadSpec(path); err == nil {
			err = batch.Check(ctx, s, nil)
		}
		return err
	}
	task, err := spec.LoadBytes(path, data)
	if err != nil {
		return err
	}
	return pipeline.CheckSpec(task)
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

// VersionCmd is `runner version`.
type VersionCmd struct{}

// Run prints the version.
func (c *VersionCmd) Run(streams Streams) error {
	_, err := fmt.Fprintf(streams.Stdout, "runner %s\n", pipeline.Version())
	return err
}
