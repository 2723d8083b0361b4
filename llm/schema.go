package llm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// SanitizeSchema rewrites a tool-parameter JSON Schema into the subset a
// provider accepts, so that tool definitions from anywhere (built-in tools,
// MCP servers) can be offered to it. The input is not changed. For
// SchemaGemini (Gemini's OpenAPI 3.0 Schema object, ai.google.dev
// "Function calling" and the Schema reference; OpenCode's
// ProviderTransform.schema):
//   - $ref to #/$defs or #/definitions is inlined (recursion stops at a
//     depth of 8 with an untyped schema);
//   - a type list ["string","null"] becomes type "string" with nullable;
//   - oneOf becomes anyOf, a single-element allOf is merged, const becomes
//     a one-value enum;
//   - enum values become strings and the type "string" (Gemini allows enum
//     only on STRING);
//   - properties and required are kept on objects only, and required names
//     only properties that exist;
//   - an array without items gets items {};
//   - formats other than Gemini's (enum and date-time for strings, float
//     and double, int32 and int64) are dropped;
//   - every other keyword (additionalProperties, $schema, exclusiveMinimum,
//     patternProperties, …) is dropped.
//
// Any other dialect returns the schema unchanged. It fails only when the
// schema is not a JSON object.
func SanitizeSchema(dialect SchemaDialect, schema json.RawMessage) (json.RawMessage, error) {
	if dialect != SchemaGemini {
		return schema, nil
	}
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("%w: tool schema is not a JSON object: %w", ErrBadRequest, err)
	}
	g := geminiSanitizer{defs: map[string]any{}}
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := root[k].(map[string]any); ok {
			for name, v := range d {
				g.defs["#/"+k+"/"+name] = v
			}
		}
	}
	if _, ok := root["type"]; !ok {
		root["type"] = "object" // tool parameters are an object
	}
	return json.Marshal(g.node(root, 0))
}

// geminiKeys are the Schema fields Gemini accepts.
func geminiKeys() []string {
	return []string{"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
		"properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern",
		"example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}
}

type geminiSanitizer struct {
	defs map[string]any
}

const maxSchemaDepth = 8

func (g geminiSanitizer) node(in map[string]any, depth int) map[string]any {
	if depth > maxSchemaDepth {
		return map[string]any{}
	}
	in = g.resolve(in, depth)
	out := map[string]any{}
	for k, v := range in {
		if slices.Contains(geminiKeys(), k) {
			out[k] = v
		}
	}
	g.normaliseType(in, out)
	g.children(out, depth)
	if c, ok := in["const"]; ok {
		out["enum"] = []any{c}
	}
	if list, ok := out["enum"].([]any); ok {
		strs := make([]any, 0, len(list))
		for _, v := range list {
			if v != nil {
				strs = append(strs, enumString(v))
			}
		}
		out["enum"], out["type"] = strs, "string"
	}
	g.typeRules(out)
	return out
}

// resolve inlines a $ref and merges a one-element allOf.
func (g geminiSanitizer) resolve(in map[string]any, depth int) map[string]any {
	if ref, ok := in["$ref"].(string); ok {
		target, found := g.defs[ref].(map[string]any)
		if !found || depth >= maxSchemaDepth {
			return map[string]any{"description": in["description"]}
		}
		merged := map[string]any{}
		for k, v := range target {
			merged[k] = v
		}
		for k, v := range in {
			if k != "$ref" {
				merged[k] = v
			}
		}
		in = merged
	}
	if all, ok := in["allOf"].([]any); ok && len(all) == 1 {
		if inner, ok := all[0].(map[string]any); ok {
			merged := map[string]any{}
			for k, v := range in {
				if k != "allOf" {
					merged[k] = v
				}
			}
			for k, v := range g.resolve(inner, depth+1) {
				if _, set := merged[k]; !set {
					merged[k] = v
				}
			}
			in = merged
		}
	}
	return in
}

// normaliseType turns a type list into one type plus nullable, and oneOf
// into anyOf.
func (g geminiSanitizer) normaliseType(in, out map[string]any) {
	if list, ok := in["type"].([]any); ok {
		delete(out, "type")
		for _, t := range list {
			switch t {
			case "null":
				out["nullable"] = true
			default:
				if _, set := out["type"]; !set {
					out["type"] = t
				}
			}
		}
	}
	if one, ok := in["oneOf"]; ok {
		if _, set := out["anyOf"]; !set {
			out["anyOf"] = one
		}
	}
}

// children sanitises nested schemas: properties, items and anyOf.
func (g geminiSanitizer) children(out map[string]any, depth int) {
	if props, ok := out["properties"].(map[string]any); ok {
		clean := map[string]any{}
		for name, v := range props {
			if m, ok := v.(map[string]any); ok {
				clean[name] = g.node(m, depth+1)
			}
		}
		out["properties"] = clean
	}
	if items, ok := out["items"].(map[string]any); ok {
		out["items"] = g.node(items, depth+1)
	} else if _, ok := out["items"]; ok {
		out["items"] = map[string]any{}
	}
	if list, ok := out["anyOf"].([]any); ok {
		clean := make([]any, 0, len(list))
		for _, v := range list {
			if m, ok := v.(map[string]any); ok {
				if t, _ := m["type"].(string); t == "null" {
					out["nullable"] = true
					continue
				}
				clean = append(clean, g.node(m, depth+1))
			}
		}
		out["anyOf"] = clean
	}
}

// typeRules applies what Gemini allows per type.
func (g geminiSanitizer) typeRules(out map[string]any) {
	t, _ := out["type"].(string)
	if t != "object" {
		delete(out, "properties")
		delete(out, "required")
	} else if req, ok := out["required"].([]any); ok {
		props, _ := out["properties"].(map[string]any)
		kept := make([]any, 0, len(req))
		for _, r := range req {
			if name, ok := r.(string); ok && props[name] != nil {
				kept = append(kept, name)
			}
		}
		out["required"] = kept
	}
	if t == "array" {
		if _, ok := out["items"]; !ok {
			out["items"] = map[string]any{}
		}
	} else {
		delete(out, "items")
	}
	if f, ok := out["format"].(string); ok && !geminiFormat(t, f) {
		delete(out, "format")
	}
}

func geminiFormat(typ, format string) bool {
	switch typ {
	case "string":
		return format == "enum" || format == "date-time"
	case "number":
		return format == "float" || format == "double"
	case "integer":
		return format == "int32" || format == "int64"
	}
	return false
}

func enumString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}
