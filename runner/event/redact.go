package event

import (
	"regexp"
	"sort"
	"strings"

	"github.com/seed43ef5acb/runner/secret"
)

// Redacted replaces every secret.
const Redacted = "[REDACTED]"

// MinSecretLen is the shortest environment value treated as a secret
// (secret.MinLen).
const MinSecretLen = secret.MinLen

// Redactor replaces secrets with "[REDACTED]": the values of secret-looking
// environment variables, explicit extra values, and common token shapes
// (OpenAI, GitHub, Slack, AWS, Google, Hugging Face keys, private key blocks,
// bearer and basic credentials, JWTs, passwords in URLs). A nil *Redactor
// redacts nothing. It is safe for concurrent use.
type Redactor struct {
	literals *strings.Replacer // nil when there are none
	patterns []secretPattern
}

type secretPattern struct {
	re   *regexp.Regexp
	repl string // expansion template (keeps a prefix group where there is one)
	// hints are literals one of which every match contains; the regexp
	// only runs when one is present (Go regexps without a literal prefix
	// are slow on long tool output). Lower-case hints are matched against
	// the lower-cased text.
	hints []string
	fold  bool
}

// IsSecretName reports whether an environment variable named name holds a
// secret by the look of its name: secret.IsName, the rule the tools'
// environment scrub uses too.
func IsSecretName(name string) bool { return secret.IsName(name) }

// NewRedactor builds a Redactor from environ ("NAME=value" entries, as
// os.Environ returns) and extra secret values (the provider key, tokens read
// from files). Values shorter than MinSecretLen are ignored.
func NewRedactor(environ []string, extra ...string) *Redactor {
	seen := map[string]bool{}
	var lits []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) < MinSecretLen || seen[v] {
			return
		}
		seen[v] = true
		lits = append(lits, v)
	}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if ok && IsSecretName(name) {
			add(val)
		}
	}
	for _, v := range extra {
		add(v)
	}
	r := &Redactor{patterns: tokenPatterns()}
	if len(lits) > 0 {
		// Longest first, so a secret containing another is replaced whole.
		sort.Slice(lits, func(i, j int) bool { return len(lits[i]) > len(lits[j]) })
		pairs := make([]string, 0, 2*len(lits))
		for _, l := range lits {
			pairs = append(pairs, l, Redacted)
		}
		r.literals = strings.NewReplacer(pairs...)
	}
	return r
}

// tokenPatterns are the token shapes redacted wherever they appear.
func tokenPatterns() []secretPattern {
	p := func(expr, repl string, hints ...string) secretPattern {
		return secretPattern{re: regexp.MustCompile(expr), repl: repl, hints: hints}
	}
	fold := func(sp secretPattern) secretPattern { sp.fold = true; return sp }
	return []secretPattern{
		p(`(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|$)`, Redacted, "PRIVATE KEY"),
		p(`\bsk-[A-Za-z0-9_-]{20,}`, Redacted, "sk-"),                                      // OpenAI, Anthropic (sk-ant-), sk-proj-
		p(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`, Redacted, "gh"),                    // GitHub tokens
		p(`\bgithub_pat_[A-Za-z0-9_]{20,}`, Redacted, "github_pat_"),                       //
		p(`\bxox[baprs]-[A-Za-z0-9-]{10,}`, Redacted, "xox"),                               // Slack
		p(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`, Redacted, "AKIA", "ASIA"),                       // AWS access key IDs
		p(`\bAIza[0-9A-Za-z_-]{35}`, Redacted, "AIza"),                                     // Google API keys
		p(`\bhf_[A-Za-z0-9]{30,}`, Redacted, "hf_"),                                        // Hugging Face
		p(`\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*`, Redacted, "eyJ"), // JWT
		fold(p(`(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]{8,}=*`, "${1}"+Redacted, "bearer")),
		fold(p(`(?i)(\bauthorization\s*[:=]\s*["']?(?:basic|token|bearer)?\s*)[A-Za-z0-9\-._~+/]{8,}=*`, "${1}"+Redacted, "authorization")),
		p(`(\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@"']+:)[^/\s@"']+@`, "${1}"+Redacted+"@", "://"), // URL passwords
	}
}

// present reports whether one of p's hints occurs in s (or lower, the
// lower-cased s, for case-insensitive patterns).
func (p secretPattern) present(s string, lower func() string) bool {
	text := s
	if p.fold {
		text = lower()
	}
	for _, h := range p.hints {
		if strings.Contains(text, h) {
			return true
		}
	}
	return len(p.hints) == 0
}

// Redact returns s with every secret replaced by "[REDACTED]".
func (r *Redactor) Redact(s string) string {
	if r == nil || s == "" {
		return s
	}
	if r.literals != nil {
		s = r.literals.Replace(s)
	}
	var low string
	lower := func() string {
		if low == "" {
			low = strings.ToLower(s)
		}
		return low
	}
	for _, p := range r.patterns {
		if p.present(s, lower) {
			s = p.re.ReplaceAllString(s, p.repl)
			low = ""
		}
	}
	return s
}

// RedactBytes is Redact for bytes; it returns b itself when nothing changed.
func (r *Redactor) RedactBytes(b []byte) []byte {
	if r == nil || len(b) == 0 {
		return b
	}
	out := r.Redact(string(b))
	if out == string(b) {
		return b
	}
	return []byte(out)
}
