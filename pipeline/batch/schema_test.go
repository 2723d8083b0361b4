package batch

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// TestBatchSchemaFileIdentical keeps schema/batch.schema.json (for
// editors) equal to the embedded copy (for `runner schema --batch`).
func TestBatchSchemaFileIdentical(t *testing.T) {
	file, err := os.ReadFile("../../schema/batch.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, Schema()) {
		t.Error("schema/batch.schema.json differs from pipeline/batch/batch.schema.json: copy pipeline/batch/batch.schema.json over it")
	}
}

// compileBatchSchema compiles the batch schema with the task schema it
// refers to (by $id, as an editor that has both does).
func compileBatchSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	for _, s := range [][]byte{spec.TaskSchema(), Schema()} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if err := c.AddResource(id, doc); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := c.Compile("https://raw.githubusercontent.com/seed43ef5acb/runner/main/schema/batch.schema.json")
	if err != nil {
		t.Fatalf("batch schema does not compile: %v", err)
	}
	return sch
}

// TestBatchSchemaKeysMatchDecoder: every mapping of the schema lists the
// keys the decoder accepts, no more and no fewer.
func TestBatchSchemaKeysMatchDecoder(t *testing.T) {
	var doc struct {
		Properties map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"properties"`
		Defs struct {
			Repo struct {
				AnyOf []struct {
					Properties map[string]any `json:"properties"`
				} `json:"anyOf"`
			} `json:"repo"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	top := map[string]any{}
	for k := range doc.Properties {
		top[k] = nil
	}
	var repo map[string]any
	for _, a := range doc.Defs.Repo.AnyOf {
		if a.Properties != nil {
			repo = a.Properties
		}
	}
	for _, c := range []struct {
		what       string
		schema     []string
		decoderKey []string
	}{
		{"top level", keys(top), topKeys},
		{"repos[]", keys(repo), repoKeys},
		{"limits", keys(doc.Properties["limits"].Properties), limitKeys},
		{"clone", keys(doc.Properties["clone"].Properties), cloneKeys},
	} {
		want := slices.Sorted(slices.Values(c.decoderKey))
		if !slices.Equal(c.schema, want) {
			t.Errorf("%s: the schema has %v, the decoder accepts %v", c.what, c.schema, want)
		}
	}
}

func batchYAMLToJSON(t *testing.T, data []byte) any {
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

// TestBatchSchemaAgreesWithLoad: the example batch specs and a spec with
// every key pass both; specs LoadSpec rejects for structural reasons the
// schema rejects too, so editors flag what the runner flags.
func TestBatchSchemaAgreesWithLoad(t *testing.T) {
	sch := compileBatchSchema(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "task.yaml"), []byte("version: 1\nname: t\nprompt: p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "repos.txt"), []byte("https://github.com/o/r main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const base = "version: 1\nname: b\ntask: task.yaml\n"
	good := map[string]string{
		"every key": base + "description: d\nrepos:\n  - ../a\n  - {url: https://github.com/o/r, ref: v1, id: r-1, inputs: {n: 3, s: x, b: true}}\n" +
			"  - {path: x}\nrepos_file: repos.txt\nconcurrency: 4\nclone: {depth: 0}\n" +
			"limits: {timeout: 1h30m, max_cost_usd: 0.5, total_max_cost_usd: 10}\nretries: 0\n",
		"inline task":     "version: 1\nname: b\ntask: {version: 1, name: t, prompt: p, limits: {max_steps: 3}}\nrepos: [x]\n",
		"repos_file only": base + "repos_file: repos.txt\n",
	}
	for _, f := range []string{"../../examples/batch/batch.yaml", "../../examples/swebench/batch.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(batchYAMLToJSON(t, data)); err != nil {
			t.Errorf("%s does not match the batch schema: %v", f, err)
		}
		if _, err := LoadSpec(f); err != nil {
			t.Errorf("%s does not load: %v", f, err)
		}
	}
	bad := map[string]string{
		"unknown key":         base + "repos: [x]\nconcurency: 2\n",
		"missing task":        "version: 1\nname: b\nrepos: [x]\n",
		"missing repos":       base,
		"version 2":           "version: 2\nname: b\ntask: task.yaml\nrepos: [x]\n",
		"task not a string":   base[:len(base)-len("task: task.yaml\n")] + "task: 3\nrepos: [x]\n",
		"inline task invalid": "version: 1\nname: b\ntask: {version: 1, name: t, promt: p}\nrepos: [x]\n",
		"repos not a list":    base + "repos: x\n",
		"repo url and path":   base + "repos: [{url: https://x/y, path: y}]\n",
		"repo without source": base + "repos: [{ref: main}]\n",
		"repo unknown key":    base + "repos: [{path: x, branch: main}]\n",
		"repo bad id":         base + "repos: [{path: x, id: 'a b'}]\n",
		"input not scalar":    base + "repos: [{path: x, inputs: {a: [1]}}]\n",
		"concurrency 0":       base + "repos: [x]\nconcurrency: 0\n",
		"retries negative":    base + "repos: [x]\nretries: -1\n",
		"depth negative":      base + "repos: [x]\nclone: {depth: -1}\n",
		"clone unknown key":   base + "repos: [x]\nclone: {deep: 1}\n",
		"limits unknown key":  base + "repos: [x]\nlimits: {max_cost: 1}\n",
		"bad timeout":         base + "repos: [x]\nlimits: {timeout: 20 minutes}\n",
		"timeout a number":    base + "repos: [x]\nlimits: {timeout: 20}\n",
		"negative cost":       base + "repos: [x]\nlimits: {max_cost_usd: -1}\n",
		"cost a string":       base + "repos: [x]\nlimits: {total_max_cost_usd: ten}\n",
		"name not a string":   "version: 1\nname: [b]\ntask: task.yaml\nrepos: [x]\n",
	}
	for name, text := range good {
		t.Run("good/"+name, func(t *testing.T) {
			path := filepath.Join(dir, "good.yaml")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadSpec(path); err != nil {
				t.Errorf("LoadSpec rejected it: %v", err)
			}
			if err := sch.Validate(batchYAMLToJSON(t, []byte(text))); err != nil {
				t.Errorf("the schema rejected it: %v", err)
			}
		})
	}
	for name, text := range bad {
		t.Run("bad/"+name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.yaml")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			// LoadSpec leaves an inline task to the pipeline, which checks
			// it when the repository runs; the schema checks it at once.
			if _, err := LoadSpec(path); err == nil && name != "inline task invalid" {
				t.Error("LoadSpec accepted it")
			}
			if err := sch.Validate(batchYAMLToJSON(t, []byte(text))); err == nil {
				t.Error("the schema accepted it")
			}
		})
	}
}
