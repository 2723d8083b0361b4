// Package pipeline turns a task spec into a run: it loads and validates the
// YAML task spec (v1), renders its prompt from inputs, converts its
// permissions into a ruleset, and runs the stages of `runner exec`
// (workspace, agent, checks, outputs, publish).
//
// Spec errors are collected, not returned one at a time: Load returns a
// SpecErrors whose every entry names file:line:col, what is wrong and what to
// do. Exit codes of the CLI come from the typed errors in errors.go, mapped by
// ExitCode.
package pipeline
