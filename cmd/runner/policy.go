package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline"
	taskspec "github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/runner/event"
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
	Task string `arg:"" name:"TASK.yaml" help:"Task spec file whose permissions decide (- for stdin)."`
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
	spec, err := c.load(streams)
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
			return fmt.Errorf("%w: %w", pipeline.ErrUsage, err)
		}
	}
	sb := sandboxFor(spec.Sandbox, env.Get(sandbox.LayersEnv))
	// where the sandbox will hide protected files, a walk (grep -r) is judged as the run's guard judges it
	hidden := sb.Error == "" && sb.Mode != string(sandbox.ModeOff) && len(sb.Layers) > 0
	x := bashcheck.ExplainWith(rules, c.Repo, q, bashcheck.Options{ProtectedHidden: hidden})
	if c.JSON {
		data, err := json.MarshalIndent(struct {
			permission.Explanation
			Sandbox sandboxState `json:"sandbox"`
		}{x, sb}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(streams.Stdout, "%s\n", data)
		if err != nil {
			return err
		}
	} else if _, err := fmt.Fprintf(streams.Stdout, "%ssandbox: %s\n", x.Text(), sb.Text()); err != nil {
		return err
	}
	if !x.Allowed {
		return &quietError{&pipeline.ExitError{Code: pipeline.ExitTaskFailed, Err: ErrDenied}}
	}
	return nil
}

// load loads the task spec, from stdin for "-".
func (c *PolicyCheckCmd) load(streams Streams) (*taskspec.Spec, error) {
	if c.Task != "-" {
		return taskspec.Load(c.Task)
	}
	data, err := readStdin(streams, "TASK.yaml")
	if err != nil {
		return nil, err
	}
	return taskspec.LoadBytes(stdinName, data)
}

// sandboxState is how the spec's commands would be contained on this
// machine: the shape run.started records (event.Sandbox: mode, layers,
// Landlock ABI, holes, what the layers do not stop here), plus why no
// sandbox can start, for `policy check --json`.
type sandboxState struct {
	event.Sandbox
	// Error says why the sandbox cannot start here ("" when it can).
	Error string `json:"error,omitempty"`
}

// sandboxFor works out the sandboxState of spec section s, with the
// layers pinned by pin (RUNNER_SANDBOX_LAYERS) when it is set.
func sandboxFor(s taskspec.Sandbox, pin string) sandboxState {
	mode := s.ModeOrDefault()
	st := sandboxState{Sandbox: event.Sandbox{Mode: string(mode), Layers: []string{}, Network: s.Network, NetworkAllow: s.Allow}}
	pinned, err := sandbox.ParseLayers(pin)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	layers, err := sandbox.ChooseLayers(mode, pinned)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	for _, l := range layers {
		st.Layers = append(st.Layers, string(l))
	}
	if mode == sandbox.ModeOff {
		if len(s.Allow) > 0 {
			st.Limits = sandbox.ProxyLimits(nil, 0)
		}
		return st
	}
	abi := sandbox.Probe().LandlockABI
	if len(s.Allow) > 0 && len(layers) > 0 && !slices.Contains(layers, sandbox.LayerNamespaces) && abi < 4 {
		st.Error = fmt.Sprintf("the network allow list under Landlock only needs Landlock ABI ≥ 4 (this kernel has %d): "+
			"enable user namespaces, or use network: deny (or allow)", abi)
		return st
	}
	if slices.Contains(layers, sandbox.LayerLandlock) {
		st.LandlockABI = abi
	}
	st.Writable = s.Writable
	st.Limits = sandbox.Limits(layers, s.Network, abi, s.Writable)
	if len(s.Allow) > 0 {
		st.Limits = append(st.Limits, sandbox.ProxyLimits(layers, abi)...)
	}
	return st
}

// Text is the human form printed after "sandbox: ": the mode and layers
// (or why it cannot start), the Landlock ABI, the holes, then one "not
// stopped here:" line per limit.
func (st sandboxState) Text() string {
	if st.Error != "" {
		return st.Mode + ": cannot start here: " + st.Error
	}
	layers := make([]sandbox.Layer, len(st.Layers))
	for i, l := range st.Layers {
		layers[i] = sandbox.Layer(l)
	}
	line := sandbox.Describe(sandbox.Mode(st.Mode), layers)
	if sandbox.Mode(st.Mode) == sandbox.ModeOff {
		if len(st.NetworkAllow) > 0 {
			line += "; network allow list not enforced: " + strings.Join(st.Limits, "; ")
		}
		return line
	}
	if st.LandlockABI > 0 {
		line += fmt.Sprintf(" (Landlock ABI %d)", st.LandlockABI)
	}
	if len(st.Writable) > 0 {
		line += "; writable: " + strings.Join(st.Writable, ", ")
	}
	switch {
	case st.Network:
		line += "; network: allow"
	case len(st.NetworkAllow) > 0:
		line += "; network: allow list through the runner's proxy: " + strings.Join(st.NetworkAllow, ", ")
	default:
		line += "; network: deny"
	}
	for _, l := range st.Limits {
		line += "\n  not stopped here: " + l
	}
	return line
}
