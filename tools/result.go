package tools

import "fmt"

// errorResult is a failure the model reads and reacts to.
func errorResult(format string, args ...any) Result {
	return Result{Output: fmt.Sprintf(format, args...), IsError: true}
}

// badArguments reports invalid call input to the model.
func badArguments(tool string, err error) Result {
	return errorResult("%s: %v. Check the tool's parameters and call it again with a valid JSON object.", tool, err)
}
