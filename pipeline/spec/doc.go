// Package spec is the task spec (v1): it loads the YAML file strictly
// (Load, LoadBytes), collecting every problem as a positioned Error, renders
// the prompt and the GitHub templates from inputs (ResolveInputs, Render,
// RenderTemplate), converts the permissions into a permission.Ruleset
// (Spec.Ruleset, RulesetOf) and carries the JSON Schema of the format
// (TaskSchema, kept equal to schema/task.schema.json by a test).
//
// Its positioned YAML decoder is shared with the batch spec
// (pipeline/batch), so that both report problems as file:line:col: message
// (hint) in an Errors that matches ErrInvalidSpec.
//
// Imports: the standard library, yaml.v3, jsonschema, doublestar,
// tools/permission, tools/mcp (the mcp: section's server settings),
// tools/sandbox (the sandbox: section), tools/sandbox/netproxy (its
// network allow list entries), llm (the provider: section's
// request profiles) and github (the .GitHub fields and event payload key
// paths templates are checked against); nothing else of this module.
// pipeline and pipeline/batch sit above it.
package spec
