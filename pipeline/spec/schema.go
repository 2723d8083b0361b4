package spec

import (
	"bytes"
	_ "embed"
)

// taskSchema is the JSON Schema of the task spec; schema/task.schema.json
// at the repository root is a copy kept identical by a test.
//
//go:embed task.schema.json
var taskSchema []byte

// TaskSchema returns the JSON Schema (draft 2020-12) of the task spec, for
// `runner schema` and editors.
func TaskSchema() []byte { return bytes.Clone(taskSchema) }
