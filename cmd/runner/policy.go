package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline"
	taskspec "github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/tools/permission"
	"github.com/seed43ef5acb/runner/tools/permission/bashcheck"
	"github.com/seed43ef5acb/runner/tools/sandbox"
)

// PolicyCmd groups the permission commands.
type PolicyCmd struct {
	Check PolicyCheckCmd `cmd:"" help:"Explain whether the task spec allows a command, a read, an edit or an MCP tool (exit 0 allow, 1 deny)."`
}

// PolicyCheckCmd is `runner policy check TASK.yaml (--bash CMD | --read
// PATH | --edit PATH | --mcp SERVER/TOOL)`.
type PolicyCheckCmd struct {
	Task string `arg:"" name:"TASK.yaml" help:"Task spec file whose permissions decide."`
	Bash string `help:"A shell command line the bash tool would run." placeholder:"CMD" xor:"query"`
	Read string `help:"A path the read, glob, grep and list tools would read." placeholder:"PATH" xor:"query"`
	Edit string `help:"A path the write and edit tools would change." placeholder:"PATH" xor:"query"`
	MCP  string `name:"mcp" help:"An MCP server's tool, as SERVER/TOOL with the tool's name as the server lists it." placeholder:"SERVER/TOOL" xor:"query"`
	Repo string `help:"Work tree that paths are relative to (default ${default})." default:"." placeholder:"DIR" type:"existingdir"`
	JSON bool   `name:"json" help:"Print the explanation as JSON."`
}

// Validate asks for exactly one query flag (kong checks that there is at
// most one).
func (c *PolicyCheckCmd) Validate() error {
	if c.Bash == "" && c.Read == "" && c.Edit == "" && c.MCP == "" {
		return fmt.Errorf("give one of --bash CMD, --read PATH, --edit PATH or --mcp SERVER/TOOL")
	}
	return nil
}

// query is the question the flags ask.
func (c *PolicyCheckCmd) query() permission.Query {
	switch {
	case c.Bash != "":
		return permission.Query{Permission: "bash", Target: c.Bash}
	case c.Read != "":
		return permission.Query{Permission: "read", Target: c.Read}
	}
	return permission.Query{Permission: "edit", Target: c.Edit}
}

// Run prints the explanation on stdout; a denial exits 1 without further
// messages.
func (c *PolicyCheckCmd) Run(streams Streams, env Environ) error {
	spec, err := taskspec.Load(c.Task)
	if err != nil {
		return err
	}
	rules, err := spec.Ruleset()
	if err != nil {
		return err
	}
	q := c.query()
	if c.MCP != "" {
		if q, err = spec.MCPQuery(c.MCP); err != nil {
			return err
		}
	}
	x := bashcheck.Explain(rules, c.Repo, q)
	sb := sandboxLine(spec.Sandbox, env.Get(sandbox.LayersEnv))
	if c.JSON {
		data, err := json.MarshalIndent(struct {
			permission.Explanation
			Sandbox string `json:"sandbox"`
		}{x, sb}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(streams.Stdout, "%s\n", data)
		if err != nil {
			return err
		}
	} else if _, err := fmt.Fprintf(streams.Stdout, "%ssandbox: %s\n", x.Text(), sb); err != nil {
		return err
	}
	if !x.Allowed {
		return &quietError{&pipeline.ExitError{Code: pipeline.ExitTaskFailed, Err: ErrDenied}}
	}
	return nil
}

// sandboxLine says how the spec's commands would be contained on this
// machine: mode and layers (pinned by RUNNER_SANDBOX_LAYERS when pin is
// set), the Landlock ABI, the holes, what the layers do not stop here, or
// why it cannot start.
func sandboxLine(s taskspec.Sandbox, pin string) string {
	pinned, err := sandbox.ParseLayers(pin)
	if err != nil {
		return fmt.Sprintf("%s: cannot start here: %v", s.ModeOrDefault(), err)
	}
	layers, err := sandbox.ChooseLayers(s.ModeOrDefault(), pinned)
	if err != nil {
		return fmt.Sprintf("%s: cannot start here: %v", s.ModeOrDefault(), err)
	}
	line := sandbox.Describe(s.ModeOrDefault(), layers)
	if s.ModeOrDefault() == sandbox.ModeOff {
		if len(s.Allow) > 0 {
			line += "; network allow list not enforced: " + strings.Join(sandbox.ProxyLimits(nil, 0), "; ")
		}
		return line
	}
	abi := sandbox.Probe().LandlockABI
	if len(s.Allow) > 0 && len(layers) > 0 && !slices.Contains(layers, sandbox.LayerNamespaces) && abi < 4 {
		return fmt.Sprintf("%s: cannot start here: the network allow list under Landlock only needs Landlock ABI ≥ 4 (this kernel has %d): "+
			"enable user namespaces, or use network: deny (or allow)", s.ModeOrDefault(), abi)
	}
	if slices.Contains(layers, sandbox.LayerLandlock) {
		line += fmt.Sprintf(" (Landlock ABI %d)", abi)
	}
	if len(s.Writable) > 0 {
		line += "; writable: " + strings.Join(s.Writable, ", ")
	}
	switch {
	case s.Network:
		line += "; network: allow"
	case len(s.Allow) > 0:
		line += "; network: allow list through the runner's proxy: " + strings.Join(s.Allow, ", ")
	default:
		line += "; network: deny"
	}
	limits := sandbox.Limits(layers, s.Network, abi, s.Writable)
	if len(s.Allow) > 0 {
		limits = append(limits, sandbox.ProxyLimits(layers, abi)...)
	}
	if len(limits) > 0 {
		line += "\n  not stopped here: " + strings.Join(limits, "\n  not stopped here: ")
	}
	return line
}
