package tools

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seed43ef5acb/runner/secret"
)

// defaultPath is used when the base environment has no PATH.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// scrubEnv returns the environment bash runs with: the base environment
// without any variable whose name or value looks secret (secret.IsName,
// secret.IsValue; the redactor's rule too) unless pass names it, and
// without the variables that make bash run code at start-up (BASH_ENV,
// ENV). Pagers and prompts that would wait for a terminal are turned off.
// Unsandboxed, the git guard (GitGuard) goes in GIT_CONFIG_* variables;
// sandboxed, it is the sandbox's read-only global config file instead.
func scrubEnv(environ, pass []string, sandboxed bool) []string {
	out := make([]string, 0, len(environ)+3)
	seen := map[string]bool{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if !slices.Contains(pass, name) && (secret.IsName(name) || secret.IsValue(value) || startupHook(name)) {
			continue
		}
		seen[name] = true
		out = append(out, kv)
	}
	for _, kv := range []string{defaultPath, "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat"} {
		name, _, _ := strings.Cut(kv, "=")
		if !seen[name] {
			out = append(out, kv)
		}
	}
	if sandboxed {
		return out
	}
	return withGitConfig(out, "safe.bareRepository", "explicit")
}

// GitGuard is the git configuration every command runs with, as a config
// file (the sandbox's global config): safe.bareRepository=explicit keeps
// git from taking a directory the model wrote (config, HEAD, objects/,
// refs/) for a bare repository when a command runs in it, whose config
// could name programs git runs (core.fsmonitor).
func GitGuard() string { return "[safe]\n\tbareRepository = explicit\n" }

// withGitConfig adds one git configuration entry through GIT_CONFIG_COUNT,
// after any the environment already has. safe.bareRepository=explicit
// keeps git from taking a directory the model wrote (config, HEAD,
// objects/, refs/) for a bare repository when a command runs in it
// (cd dir && git status, git -C dir …): that config could name programs
// git runs, such as core.fsmonitor.
func withGitConfig(env []string, key, value string) []string {
	n := 0
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_COUNT="); ok {
			if c, err := strconv.Atoi(v); err == nil && c > 0 {
				n = c
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", n, key), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n, value),
		fmt.Sprintf("GIT_CONFIG_COUNT=%d", n+1))
}

// startupHook reports variables that make a shell run a file at start-up
// or change how it reads commands (options, CDPATH, preloaded libraries),
// which the permission check, parsing a plain bash, does not see.
func startupHook(name string) bool {
	switch name {
	case "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "CDPATH", "PROMPT_COMMAND", "LD_PRELOAD", "LD_AUDIT", "GLOBIGNORE":
		return true
	}
	return strings.HasPrefix(name, "BASH_FUNC_")
}
