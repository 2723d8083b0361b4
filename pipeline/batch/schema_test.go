package batch

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestBatchSchemaFileIdentical keeps schema/batch.schema.json (for
// editors) equal to the embedded copy (for `runner schema --batch`). The
// schema and LoadSpec are held to one verdict over the examples and a
// corpus of batch specs by TestSchemaAgreesWithValidate in cmd/runner.
func TestBatchSchemaFileIdentical(t *testing.T) {
	file, err := os.ReadFile("../../schema/batch.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, Schema()) {
		t.Error("schema/batch.schema.json differs from pipeline/batch/batch.schema.json: copy pipeline/batch/batch.schema.json over it")
	}
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
