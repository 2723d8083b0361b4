package runner

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/seed43ef5acb/runner/llm"
	"github.com/seed43ef5acb/runner/tools"
)

// StructuredOutputTool is the name of the tool offered when a run declares
// an output schema (a public contract, as OpenCode's).
const StructuredOutputTool = "StructuredOutput"

const structuredDescription = `Give the final result of the task as structured data. Call this exactly once, when you are done, with arguments that match the schema. The run ends when the arguments are valid.`

const schemaURL = "mem://output.schema.json"

// structuredToolDef is the StructuredOutput tool with the task's schema.
func structuredToolDef(schema json.RawMessage) llm.ToolDef {
	return llm.ToolDef{Name: StructuredOutputTool, Description: structuredDescription, Parameters: schema}
}

// compileSchema compiles the task's output schema.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSchema, err)
	}
	return sch, nil
}

// structuredCall validates a StructuredOutput call: valid arguments end the
// run (t.structured); invalid ones are an error result, counted towards the
// allowed tries.
func (s *Session) structuredCall(t *turn, call *llm.ToolCall) tools.Result {
	if call.ArgumentsInvalid {
		s.outputTries++
		return errorResult("invalid StructuredOutput arguments: not valid JSON: " + clip(call.ArgumentsRaw, 200))
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(call.Arguments))
	if err == nil {
		err = s.schema.Validate(v)
	}
	if err != nil {
		s.outputTries++
		return errorResult(fmt.Sprintf("StructuredOutput arguments do not match the schema (try %d of %d): %v",
			s.outputTries, maxStructuredTries, err))
	}
	t.structured = append(json.RawMessage(nil), call.Arguments...)
	return tools.Result{Output: "Structured output accepted."}
}
