package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline"
)

// stdinName names standard input in error positions ("<stdin>:3:5: …").
const stdinName = "<stdin>"

// maxInput is the most readInput reads from standard input, in bytes.
const maxInput = 64 << 20

// readStdin reads all of standard input for the argument what ("-" given
// as TASK.yaml, say); more than maxInput bytes is an error.
func readStdin(streams Streams, what string) ([]byte, error) {
	if streams.Stdin == nil {
		return nil, fmt.Errorf("%w: %s: no standard input to read", pipeline.ErrUsage, what)
	}
	data, err := io.ReadAll(io.LimitReader(streams.Stdin, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: read standard input: %w", pipeline.ErrUsage, what, err)
	}
	if len(data) > maxInput {
		return nil, fmt.Errorf("%w: %s: standard input is larger than %d bytes: give a file instead", pipeline.ErrUsage, what, maxInput)
	}
	return data, nil
}

// readInput reads the file path, or standard input for "-". It returns
// the name errors should give the input: path, or "<stdin>".
func readInput(streams Streams, path, what string) (name string, data []byte, err error) {
	if path == "-" {
		data, err = readStdin(streams, what)
		return stdinName, data, err
	}
	data, err = os.ReadFile(path)
	return path, data, err
}

// oneStdin refuses a command line that reads standard input twice: the
// second reader would get nothing. args are the arguments that read a
// file, "-" for stdin.
func oneStdin(args ...string) error {
	n := 0
	for _, a := range args {
		if a == "-" {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("%w: \"-\" (standard input) is given %d times: it can be read only once; give the others as files", pipeline.ErrUsage, n)
	}
	return nil
}

// adhocSpecFormat is the printf format of the spec notASpec suggests: it
// allows read and edit, so the agent has tools to do the task with.
const adhocSpecFormat = `version: 1\nname: adhoc\npermissions:\n  read: allow\n  edit: allow\nprompt: |\n  %s\n`

// notASpec explains a spec argument that is no file and looks like a
// prompt (it has spaces, or no .yaml, .yml or .json suffix): exec and
// validate take a task spec file. It returns nil for anything else.
func notASpec(path string) error {
	if path == "-" || path == "" {
		return nil
	}
	if _, err := os.Stat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	ext := strings.ToLower(filepath.Ext(path))
	if !strings.ContainsAny(path, " \t\n") && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
		return nil
	}
	quoted := strings.ReplaceAll(path, "'", `'\''`)
	return fmt.Errorf("%w: %q is not a file: runner exec takes a task spec file (YAML), not a prompt; "+
		"to run a prompt, put it in a spec:\n"+
		"  printf '%s' '%s' > task.yaml\n"+
		"  runner exec task.yaml --model MODEL\n"+
		"(the spec lets the agent read and edit the work tree; bash stays denied until "+
		"permissions.bash allows commands, e.g. {\"go test *\": allow}: see docs/permissions.md)\n"+
		"(--prompt TEXT replaces the prompt of a spec you have)", pipeline.ErrUsage, path, adhocSpecFormat, quoted)
}

// specReadErr is the error of reading the spec file path: a missing file
// says where it was looked for and what to give instead.
func specReadErr(path string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: read spec: %w", pipeline.ErrUsage, err)
	}
	dir, derr := os.Getwd()
	if derr != nil {
		dir = "."
	}
	if filepath.IsAbs(path) {
		dir = filepath.Dir(path)
	}
	return fmt.Errorf("%w: spec file %q does not exist (looked in %s): check the argument's path, "+
		"or write a spec there (examples/ holds some; the format is in docs/spec.md)", pipeline.ErrUsage, path, dir)
}
