package tools

import (
	"slices"
	"strings"
)

// defaultPath is used when the base environment has no PATH.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// scrubEnv returns the environment bash runs with: the base environment
// without any variable whose name looks secret (unless pass names it), and
// without the variables that make bash run code at start-up (BASH_ENV,
// ENV). Pagers and prompts that would wait for a terminal are turned off.
func scrubEnv(environ, pass []string) []string {
	out := make([]string, 0, len(environ)+3)
	seen := map[string]bool{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if !slices.Contains(pass, name) && (secretName(name) || secretValue(value) || startupHook(name)) {
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
	return out
}

// secretName reports environment variable names that look like they hold
// a secret: provider keys, GitHub tokens, passwords, credentials.
func secretName(name string) bool {
	up := strings.ToUpper(name)
	switch up {
	case "OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN":
		return true
	}
	for _, s := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY", "API_KEY", "PRIVATE", "COOKIE", "SESSION_KEY"} {
		if strings.Contains(up, s) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		switch {
		case part == "KEY" || part == "KEYS" || strings.HasSuffix(part, "KEY"),
			part == "PASS" || part == "PAT" || part == "PW" || part == "DSN",
			strings.HasPrefix(part, "AUTH") && part != "AUTHOR",
			strings.Contains(part, "OAUTH"):
			return true
		}
	}
	return false
}

// secretValue reports values shaped like well-known tokens, whatever the
// variable is called.
func secretValue(v string) bool {
	for _, p := range []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "xoxb-", "xoxp-", "AKIA", "glpat-"} {
		if strings.HasPrefix(v, p) && len(v) >= len(p)+16 {
			return true
		}
	}
	return false
}

// startupHook reports variables that make a shell run a file at start-up.
func startupHook(name string) bool {
	return name == "BASH_ENV" || name == "ENV" || strings.HasPrefix(name, "BASH_FUNC_")
}
