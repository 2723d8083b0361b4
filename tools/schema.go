package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// schema is a JSON Schema object for a tool's arguments. Field order is
// fixed by the struct and properties are a map (encoded with sorted keys),
// so the encoding is byte-stable.
type schema struct {
	Type                 string                `json:"type"`
	Properties           map[string]propSchema `json:"properties"`
	Required             []string              `json:"required,omitempty"`
	AdditionalProperties bool                  `json:"additionalProperties"`
}

type propSchema struct {
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
}

// schemaFor builds the JSON Schema of a params struct from its tags: `json`
// gives the name (",omitempty" makes it optional) and `description` the
// text the model reads. Supported field kinds: string, bool, integers and
// floats. It panics on anything else: params structs are fixed at compile
// time and covered by tests.
func schemaFor(params any) json.RawMessage {
	t := reflect.TypeOf(params)
	s := schema{Type: "object", Properties: map[string]propSchema{}}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		s.Properties[name] = propSchema{Type: jsonType(f.Type.Kind()), Description: f.Tag.Get("description")}
		if !strings.Contains(opts, "omitempty") {
			s.Required = append(s.Required, name)
		}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %T: %v", params, err))
	}
	return raw
}

func jsonType(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	panic(fmt.Sprintf("tools: unsupported parameter kind %s", k))
}

// decodeParams decodes a call's input into a params struct of type T and
// checks that every required field (no omitempty) is present. Unknown
// fields are ignored. Errors wrap ErrBadArguments and say what to send.
func decodeParams[T any](input json.RawMessage) (T, error) {
	var p T
	trimmed := strings.TrimSpace(string(input))
	if trimmed == "" || trimmed == "null" {
		trimmed = "{}"
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(trimmed), &fields); err != nil {
		return p, fmt.Errorf("%w: want a JSON object: %v", ErrBadArguments, err)
	}
	if err := json.Unmarshal([]byte(trimmed), &p); err != nil {
		return p, fmt.Errorf("%w: %v", ErrBadArguments, err)
	}
	t := reflect.TypeOf(p)
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || strings.Contains(opts, "omitempty") {
			continue
		}
		if _, ok := fields[name]; !ok {
			return p, fmt.Errorf("%w: missing required parameter %q", ErrBadArguments, name)
		}
	}
	return p, nil
}
