package main

import (
	"errors"
	"fmt"

	"github.com/seed43ef5acb/runner/pipeline"
)

// ValidateCmd is `runner validate TASK.yaml...`.
type ValidateCmd struct {
	Files []string `arg:"" name:"TASK.yaml" help:"Task spec files."`
}

// Run loads every file and reports all problems of all files (exit 2).
func (c *ValidateCmd) Run(streams Streams) error {
	var errs []error
	for _, f := range c.Files {
		if _, err := pipeline.Load(f); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(streams.Stdout, "%s: ok\n", f)
	}
	return errors.Join(errs...)
}

// SchemaCmd is `runner schema`.
type SchemaCmd struct{}

// Run prints the task spec's JSON Schema.
func (c *SchemaCmd) Run(streams Streams) error {
	_, err := streams.Stdout.Write(pipeline.TaskSchema())
	return err
}

// VersionCmd is `runner version`.
type VersionCmd struct{}

// Run prints the version.
func (c *VersionCmd) Run(streams Streams) error {
	_, err := fmt.Fprintf(streams.Stdout, "runner %s\n", pipeline.Version())
	return err
}
