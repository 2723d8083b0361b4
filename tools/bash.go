package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/seed43ef5acb/runner/tools/permission"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// sandboxed reports whether sb contains commands with at least one layer.
func sandboxed(sb *sandbox.Sandbox) bool { return sb != nil && len(sb.Layers()) > 0 }

//go:embed bash.md
var bashDescription string

// BashParams are the arguments of the bash tool.
type BashParams struct {
	Command     string `json:"command" description:"The command line to run with bash in the work tree."`
	TimeoutMS   int    `json:"timeout_ms,omitempty" description:"Timeout in milliseconds (default 120000, at most 600000)."`
	Description string `json:"description,omitempty" description:"A few words saying what the command does."`
}

type bashTool struct{ base }

func (t *bashTool) Info() Info {
	return Info{Name: "bash", Description: bashDescription, Parameters: schemaFor(BashParams{})}
}

// Permissions: the command line, judged command by command.
func (t *bashTool) Permissions(input json.RawMessage) ([]Request, error) {
	p, err := decodeParams[BashParams](input)
	if err != nil {
		return nil, err
	}
	return []Request{{Permission: permission.Bash, Target: p.Command}}, nil
}

// ProtectedHidden reports whether the OS sandbox hides the protected
// .env* files from commands (a mode other than off, with a layer); Guard
// tells the static check (bashcheck.Options).
func (t *bashTool) ProtectedHidden() bool {
	return sandboxed(t.env.Sandbox) && t.env.Sandbox.Mode() != sandbox.ModeOff
}

func (t *bashTool) Run(ctx context.Context, call Call) (Result, error) {
	p, err := decodeParams[BashParams](call.Input)
	if err != nil {
		return badArguments("bash", err), nil
	}
	if strings.TrimSpace(p.Command) == "" {
		return errorResult("bash: the command is empty."), nil
	}
	if t.pathsErr != nil {
		return Result{}, fmt.Errorf("bash: %w", t.pathsErr)
	}
	create, err := t.outputFile(call.ID)
	if err != nil {
		return Result{}, err
	}
	out := newBoundedOutput(orDefault(t.env.MaxOutputBytes, DefaultMaxOutputBytes), create)
	out.fileMax = orDefault(t.env.MaxOutputFileBytes, DefaultMaxOutputFileBytes)
	timeout := t.timeout(p.TimeoutMS)
	oc, runErr := runShell(ctx, runSpec{
		shell: shellPath(), command: p.Command, dir: t.paths.Root(),
		env: scrubEnv(t.env.Environ, t.env.PassEnv, sandboxed(t.env.Sandbox)), timeout: timeout, out: out,
		sandbox: t.env.Sandbox,
	})
	fullPath := out.closeFile()
	if errors.Is(runErr, sandbox.ErrUnavailable) {
		return errorResult("bash is refused: %v", runErr), nil
	}
	if runErr != nil {
		return Result{}, runErr
	}
	res := bashResult(oc, out, fullPath, timeout)
	if oc.cancelled {
		return res, fmt.Errorf("bash: %w", context.Cause(ctx))
	}
	return res, nil
}

// timeout is the effective timeout for a requested timeout_ms.
func (t *bashTool) timeout(ms int) time.Duration {
	d := t.env.BashTimeout
	if d <= 0 {
		d = DefaultBashTimeout
	}
	if ms > 0 {
		d = time.Duration(ms) * time.Millisecond
	}
	limit := t.env.MaxBashTimeout
	if limit <= 0 {
		limit = max(MaxBashTimeout, t.env.BashTimeout)
	}
	return min(d, limit)
}

// outputFile makes sure OutputDir exists and returns what creates the
// file that receives the full output once it outgrows what the model
// reads (OutputDir/bash-<call id>-<random>.log, made by Env.Files), or
// nil when no OutputDir is configured.
func (t *bashTool) outputFile(callID string) (func() (OutputFile, error), error) {
	if t.env.OutputDir == "" {
		return nil, nil
	}
	files := OrPlain(t.env.Files)
	if err := files.MkdirAll(t.env.OutputDir); err != nil {
		return nil, fmt.Errorf("bash: output dir: %w", err)
	}
	return func() (OutputFile, error) {
		f, err := files.CreateTemp(t.env.OutputDir, "bash-"+safeName(callID)+"*.log")
		if err != nil {
			return nil, fmt.Errorf("bash: output file: %w", err)
		}
		return f, nil
	}, nil
}

// shellFound is the last shellPath answer and the PATH it was found in.
var shellFound struct {
	sync.Mutex
	path, shell string
}

// shellPath prefers bash, whose dialect the permission check parses. The
// answer is kept while PATH stays the same (a search of PATH is a stat per
// directory, each bash call).
func shellPath() string {
	path := os.Getenv("PATH")
	shellFound.Lock()
	defer shellFound.Unlock()
	if shellFound.shell != "" && shellFound.path == path {
		if _, err := os.Stat(shellFound.shell); err == nil {
			return shellFound.shell
		}
	}
	shell := "/bin/sh"
	for _, s := range []string{"bash", "/bin/bash", "sh"} {
		if p, err := exec.LookPath(s); err == nil {
			shell = p
			break
		}
	}
	shellFound.path, shellFound.shell = path, shell
	return shell
}

// bashResult is what the model reads.
func bashResult(oc runOutcome, out *boundedOutput, fullPath string, timeout time.Duration) Result {
	text := out.text(fullPath)
	if strings.TrimSpace(text) == "" {
		text = "(no output)"
	}
	res := Result{
		TouchedUnknown: true,
		Truncated:      out.truncated(),
		Metadata: map[string]any{
			"exit_code":   oc.exitCode,
			"duration_ms": oc.duration.Milliseconds(),
			"timed_out":   oc.timedOut,
		},
	}
	if fullPath != "" {
		res.Metadata["output_path"] = fullPath
	}
	if oc.launch != "" {
		res.Metadata["sandbox_launch"] = string(oc.launch) // zygote, helper or direct (mode off)
	}
	if oc.launchNote != "" {
		res.Metadata["sandbox_launch_note"] = oc.launchNote // why not through the zygote
	}
	if oc.refresh != nil {
		res.Metadata["sandbox_refresh"] = oc.refresh // new covers before the command: protected files that appeared
	}
	switch {
	case oc.timedOut:
		text += fmt.Sprintf("\n\n(the command timed out after %s and was killed, with everything it started)", timeout)
		res.IsError = true
	case oc.cancelled:
		text += "\n\n(the run was cancelled; the command was killed)"
		res.IsError = true
	case oc.exitCode != 0:
		text += fmt.Sprintf("\n\n(exit code %d)", oc.exitCode)
		res.IsError = true
	}
	res.Output = text
	return res
}

// safeName keeps the letters, digits, '-' and '_' of a call ID (at most 64)
// for use in a file name, followed by '-' when anything is kept.
func safeName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if b.Len() >= 64 {
			break
		}
		if r == '-' || r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return b.String() + "-"
}
