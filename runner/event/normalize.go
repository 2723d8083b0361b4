package event

import "encoding/json"

// MarshalJSON writes a nil Inputs map as {} so "inputs" is always an object.
func (p RunStarted) MarshalJSON() ([]byte, error) {
	type plain RunStarted
	if p.Inputs == nil {
		p.Inputs = map[string]string{}
	}
	return marshalJSON(plain(p))
}

// MarshalJSON writes nil Files as [] so "files" is always an array.
func (p Patch) MarshalJSON() ([]byte, error) {
	type plain Patch
	if p.Files == nil {
		p.Files = []FileChange{}
	}
	return marshalJSON(plain(p))
}

// MarshalJSON writes a nil Input as null (the arguments were invalid).
func (p ToolStarted) MarshalJSON() ([]byte, error) {
	type plain ToolStarted
	if len(p.Input) == 0 {
		p.Input = json.RawMessage("null")
	}
	return marshalJSON(plain(p))
}

// MarshalJSON writes an empty StructuredOutput as null and nil
// DeniedCalls as [].
func (p RunFinished) MarshalJSON() ([]byte, error) {
	type plain RunFinished
	if len(p.StructuredOutput) == 0 {
		p.StructuredOutput = json.RawMessage("null")
	}
	if p.DeniedCalls == nil {
		p.DeniedCalls = []PermissionDenied{}
	}
	return marshalJSON(plain(p))
}
