package spec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// TestSchemaFileIdentical keeps schema/task.schema.json (for editors) equal
// to the embedded copy (for `runner schema`).
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

// taskSpecFiles are every example task spec and the full test spec.
func taskSpecFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("../../examples", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (filepath.Ext(path) == ".yaml" || filepath.Ext(path) == ".yml") && isTaskSpec(t, path) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return append(files, "testdata/full.yaml")
}

// isTaskSpec tells task specs from other YAML under examples/ (workflows,
// batch specs, Kubernetes manifests): a task spec has a top-level prompt.
func isTaskSpec(t *testing.T, path string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	_, hasPrompt := top["prompt"]
	_, hasRepos := top["repos"]
	return hasPrompt && !hasRepos
}

func TestExamplesMatchSchema(t *testing.T) {
	sch := compileTaskSchema(t)
	files := taskSpecFiles(t)
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(yamlToJSON(t, data)); err != nil {
			t.Errorf("%s does not match the task schema: %v", f, err)
		}
		if _, err := LoadBytes(f, data); err != nil {
			t.Errorf("%s does not load:\n%v", f, err)
		}
	}
}

// TestSchemaAgreesWithLoad: specs that Load rejects for structural reasons
// the schema rejects too, so editors flag what the runner flags.
func TestSchemaAgreesWithLoad(t *testing.T) {
	sch := compileTaskSchema(t)
	bad := map[string]string{
		"unknown key":        base + "promt: x\n",
		"missing name":       "version: 1\nprompt: x\n",
		"version 2":          "version: 2\nname: t\nprompt: x\n",
		"bad name":           "version: 1\nname: a b\nprompt: x\n",
		"wrong type":         base + "retries: two\n",
		"unknown limit":      base + "limits: {max_step: 3}\n",
		"bad duration":       base + "limits: {timeout: 20}\n",
		"bad duration text":  base + "limits: {timeout: 20 minutes}\n",
		"ask":                base + "permissions: {bash: ask}\n",
		"unknown permission": base + "permissions: {grep: allow}\n",
		"bad pattern action": base + "permissions: {edit: {'**': alow}}\n",
		"absolute pattern":   base + "permissions: {edit: {'/etc/**': allow}}\n",
		"check without run":  base + "checks: [{name: a}]\n",
		"pull request title": base + "github: {pull_request: {branch: b}}\n",
		"bad input name":     base + "inputs: {my-pkg: {}}\n",
		"bad env":            base + "env: ['A=1']\n",
		"schema not object":  base + "output: {schema: true}\n",
		"model override key": base + "models: {m: {price: 1}}\n",
		"negative retries":   base + "retries: -1\n",
	}
	for name, spec := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := LoadBytes("bad.yaml", []byte(spec)); err == nil {
				t.Error("Load accepted it")
			}
			if err := sch.Validate(yamlToJSON(t, []byte(spec))); err == nil {
				t.Error("the schema accepted it")
			}
		})
	}
}
