package batch

import (
	"bytes"
	_ "embed"
)

// batchSchema is the JSON Schema of the batch spec; schema/batch.schema.json
// at the repository root is a copy kept identical by a test, and a test
// keeps its keys equal to the decoder's (topKeys, repoKeys, limitKeys,
// cloneKeys). An inline task refers to the task schema by a relative $ref
// (task.schema.json), resolved against the $id: the file published beside it.
//
//go:embed batch.schema.json
var batchSchema []byte

// Schema returns the JSON Schema (draft 2020-12) of the batch spec, for
// `runner schema --batch` and editors.
func Schema() []byte { return bytes.Clone(batchSchema) }
