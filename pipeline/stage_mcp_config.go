package pipeline

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"sort"

	"github.com/seed43ef5acb/runner/pipeline/spec"
	"github.com/seed43ef5acb/runner/tools/mcp"
)

// resolveMCP turns the spec's mcp.servers into servers to start: ${NAME}
// references resolved from the runner's environment (their values become
// secrets the redactor hides), a stdio server's environment built, and its
// program looked up. A missing variable or program is an invalid task,
// reported before anything is written.
func (r *execRun) resolveMCP(ctx context.Context) error {
	if ctx.Err() != nil {
		return errCancelled(ctx)
	}
	names := make([]string, 0, len(r.spec.MCP.Servers))
	for name := range r.spec.MCP.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var errs spec.Errors
	for _, name := range names {
		srv, secrets, problems := r.resolveServer(name, r.spec.MCP.Servers[name])
		errs = append(errs, problems...)
		r.mcpServers = append(r.mcpServers, srv)
		r.mcpSecrets = append(r.mcpSecrets, secrets...)
	}
	if len(errs) > 0 {
		return errs.Sorted()
	}
	return nil
}

// resolveServer resolves one server entry; problems point into the spec.
func (r *execRun) resolveServer(name string, s spec.MCPServer) (mcp.Server, []string, spec.Errors) {
	out := mcp.Server{Name: name, Command: s.Command, URL: s.URL, Timeout: s.Timeout}
	var secrets []string
	var errs spec.Errors
	expand := func(section, key, v string) string {
		val, missing, values := spec.Expand(v, r.lookupEnv)
		secrets = append(secrets, values...)
		for _, m := range missing {
			errs = append(errs, r.specError(fmt.Sprintf("mcp.servers.%s.%s.%s", name, section, key),
				fmt.Sprintf("mcp.servers.%s.%s.%s: ${%s} is not set in the runner's environment", name, section, key, m),
				"set it before the run (in GitHub Actions, under env: of the step)"))
		}
		return val
	}
	if len(s.Headers) > 0 {
		out.Headers = map[string]string{}
		for _, k := range sortedKeys(s.Headers) {
			out.Headers[k] = expand("headers", k, s.Headers[k])
		}
	}
	if len(s.Command) > 0 {
		env := map[string]string{}
		for _, k := range sortedKeys(s.Env) {
			env[k] = expand("env", k, s.Env[k])
		}
		out.Env = r.serverEnv(env)
		if _, err := exec.LookPath(s.Command[0]); err != nil {
			errs = append(errs, r.specError("mcp.servers."+name+".command",
				fmt.Sprintf("mcp.servers.%s.command: %v", name, err), "install it, or give its full path"))
		}
	}
	return out, secrets, errs
}

// serverEnv is a stdio server's whole environment: the spec's env, and
// the runner's PATH unless the spec sets one (so that "npx" finds "node").
// Nothing else of the runner's environment is passed.
func (r *execRun) serverEnv(env map[string]string) []string {
	if _, ok := env["PATH"]; !ok {
		if p, ok := r.lookupEnv("PATH"); ok {
			env["PATH"] = p
		}
	}
	out := make([]string, 0, len(env))
	for _, k := range sortedKeys(env) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// lookupEnv looks a variable up in the environment cmd passed down.
func (r *execRun) lookupEnv(key string) (string, bool) {
	for _, kv := range slices.Backward(r.opts.Environ) {
		if k, v, ok := splitKV(kv); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// specError is an invalid-spec error at the position of a dotted key path.
func (r *execRun) specError(path, msg, hint string) *spec.Error {
	p, _ := r.spec.Position(path)
	return &spec.Error{File: r.spec.Path, Line: max(p.Line, 1), Col: max(p.Col, 1), Msg: msg, Hint: hint}
}
