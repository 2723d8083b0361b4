package llmtest

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// geminiSchemaKeys are the fields of Gemini's Schema object (ai.google.dev
// API reference, "Schema").
func geminiSchemaKeys() []string {
	return []string{"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
		"properties", "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern",
		"example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}
}

// Gemini is Gemini's OpenAI-compatible endpoint: tool parameters are read
// as its Schema object, so unknown keywords, enums on non-strings,
// properties on non-objects, unsupported string formats and arrays without
// items are rejected with a 400 INVALID_ARGUMENT in its list-wrapped body.
func Gemini() Personality {
	return Personality{Name: "gemini", Source: "Gemini API INVALID_ARGUMENT messages (Unknown name \"additionalProperties\" … Cannot find field; enum: only allowed for STRING type; properties: only allowed for OBJECT type)",
		check: func(req RecordedRequest) (Reply, bool) {
			tools, _ := req.Body["tools"].([]any)
			for i, t := range tools {
				tm, _ := t.(map[string]any)
				fn, _ := tm["function"].(map[string]any)
				params, _ := fn["parameters"].(map[string]any)
				at := fmt.Sprintf("tools[0].function_declarations[%d].parameters", i)
				if msg := geminiSchemaProblem(params, at); msg != "" {
					return jsonReply(http.StatusBadRequest, []any{map[string]any{"error": map[string]any{
						"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}}}), true
				}
			}
			return Reply{}, false
		}}
}

func geminiSchemaProblem(s map[string]any, at string) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(geminiSchemaKeys(), k) {
			return fmt.Sprintf("Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", k, at)
		}
	}
	typ, _ := s["type"].(string)
	field := "* GenerateContentRequest." + at
	switch {
	case s["enum"] != nil && typ != "string":
		return field + ".enum: only allowed for STRING type"
	case s["properties"] != nil && typ != "object":
		return field + ".properties: only allowed for OBJECT type"
	case typ == "array" && s["items"] == nil:
		return field + ".items: missing field."
	}
	if f, ok := s["format"].(string); ok && typ == "string" && f != "enum" && f != "date-time" {
		return field + ".format: only 'enum' and 'date-time' are supported for STRING type"
	}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if m, ok := props[n].(map[string]any); ok {
			if msg := geminiSchemaProblem(m, at+".properties["+n+"]"); msg != "" {
				return msg
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		return geminiSchemaProblem(items, at+".items")
	}
	return ""
}

// Moonshot rejects a temperature other than 1 for kimi-k2.5 and the
// thinking models, with its invalid_request_error body.
func Moonshot() Personality {
	return Personality{Name: "moonshot", Source: "Moonshot kimi-k2.5 fixed sampling (https://github.com/promptfoo/promptfoo/pull/9672, https://github.com/lsdefine/GenericAgent/pull/30)",
		check: func(req RecordedRequest) (Reply, bool) {
			base := modelBase(req)
			if !strings.Contains(base, "kimi-k2.5") && !strings.Contains(base, "kimi-k2-thinking") {
				return Reply{}, false
			}
			if t, ok := req.Body["temperature"].(float64); ok && t != 1 {
				return jsonReply(http.StatusBadRequest, map[string]any{"error": map[string]any{
					"message": fmt.Sprintf("invalid temperature: only 1 is allowed for this model, got %v", t),
					"type":    "invalid_request_error"}}), true
			}
			return Reply{}, false
		}}
}

// XAI rejects reasoning_effort on grok-4, with xAI's {"code","error"} body.
func XAI() Personality {
	return Personality{Name: "xai", Source: "xAI reasoning docs: grok-4 has no reasoning_effort; error body {\"code\":\"Client specified an invalid argument\",\"error\":…}",
		check: func(req RecordedRequest) (Reply, bool) {
			if !strings.HasPrefix(modelBase(req), "grok-4") {
				return Reply{}, false
			}
			if _, ok := req.Body["reasoning_effort"]; ok {
				return jsonReply(http.StatusBadRequest, map[string]any{"code": "Client specified an invalid argument",
					"error": "Argument not supported on this model: reasoningEffort"}), true
			}
			return Reply{}, false
		}}
}
