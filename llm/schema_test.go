package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

func TestSanitizeSchemaGemini(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"mcp server schema", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,
			"properties":{"path":{"type":"string","format":"uri","description":"file"},"mode":{"type":"integer","enum":[1,2]},
			"opts":{"$ref":"#/$defs/opts"}},"required":["path","gone"],
			"$defs":{"opts":{"type":"object","properties":{"depth":{"type":["integer","null"],"exclusiveMinimum":0}}}}}`,
			`{"type":"object","properties":{"path":{"type":"string","description":"file"},"mode":{"type":"string","enum":["1","2"]},
			"opts":{"type":"object","properties":{"depth":{"type":"integer","nullable":true}}}},"required":["path"]}`},
		{"properties on a non-object", `{"type":"object","properties":{"s":{"type":"string","properties":{"x":{}},"required":["x"]}}}`,
			`{"type":"object","properties":{"s":{"type":"string"}}}`},
		{"oneOf, anyOf with null, const", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"null"}]},"k":{"const":"only"}}}`,
			`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"}],"nullable":true},"k":{"type":"string","enum":["only"]}}}`},
		{"array without items, kept formats", `{"type":"object","properties":{"xs":{"type":"array"},"at":{"type":"string","format":"date-time"},"n":{"type":"number","format":"double"}}}`,
			`{"type":"object","properties":{"xs":{"type":"array","items":{}},"at":{"type":"string","format":"date-time"},"n":{"type":"number","format":"double"}}}`},
		{"single allOf merged, root without type", `{"properties":{"a":{"allOf":[{"type":"string","minLength":1}],"description":"d"}}}`,
			`{"type":"object","properties":{"a":{"type":"string","minLength":1,"description":"d"}}}`},
		{"recursive ref stops", `{"type":"object","properties":{"n":{"$ref":"#/definitions/node"}},"definitions":{"node":{"type":"object","properties":{"next":{"$ref":"#/definitions/node"}}}}}`, ""},
	} {
		out, err := llm.SanitizeSchema(llm.SchemaGemini, json.RawMessage(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.want != "" {
			var got, want any
			_ = json.Unmarshal(out, &got)
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, diff)
			}
		}
		// Whatever came in, Gemini accepts what goes out.
		var params map[string]any
		_ = json.Unmarshal(out, &params)
		req := llmtest.RecordedRequest{Body: map[string]any{"tools": []any{map[string]any{"function": map[string]any{"parameters": params}}}}}
		if r, rejected := llmtest.Gemini().Check(req); rejected {
			t.Errorf("%s: Gemini rejects the sanitised schema: %s", tc.name, r.Body)
		}
	}
	if _, err := llm.SanitizeSchema(llm.SchemaGemini, json.RawMessage(`[1]`)); err == nil {
		t.Error("a non-object schema must fail")
	}
	in := json.RawMessage(`{"type":"object","additionalProperties":false}`)
	if out, _ := llm.SanitizeSchema("", in); string(out) != string(in) {
		t.Errorf("no dialect changed the schema: %s", out)
	}
}
