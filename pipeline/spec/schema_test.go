package spec

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// TestSchemaFileIdentical keeps schema/task.schema.json (for editors) equal
// to the embedded copy (for `runner schema`). The schema and the decoder
// are held to one verdict over the examples and a corpus of specs by
// TestSchemaAgreesWithValidate in cmd/runner, which runs `runner validate`.
func TestSchemaFileIdentical(t *testing.T) {
	file, err := os.ReadFile("../../schema/task.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, TaskSchema()) {
		t.Error("schema/task.schema.json differs from pipeline/spec/task.schema.json: copy pipeline/spec/task.schema.json over it")
	}
}

func compileTaskSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(TaskSchema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("task.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("task.schema.json")
	if err != nil {
		t.Fatalf("task schema does not compile: %v", err)
	}
	return sch
}

// yamlToJSON converts a YAML document to a JSON value as an editor would.
func yamlToJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
