package event

import (
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/seed43ef5acb/runner/secret"
)

// Redacted replaces every secret.
const Redacted = secret.Mark

// MinSecretLen is the shortest environment value treated as a secret
// (secret.MinLen).
const MinSecretLen = secret.MinLen

// Redactor replaces secrets with "[REDACTED]": the values of secret-looking
// environment variables, explicit extra values, and common token shapes
// (OpenAI, GitHub, Slack, AWS, Google, Hugging Face keys, private key blocks,
// bearer and basic credentials, JWTs, passwords in URLs). Each value is
// taken with its secret.Forms (a URL's password alone too, and their
// base64, hex and percent-encoded forms). Values
// learned during the run (a protected file a command made) join with Add.
// A nil *Redactor redacts nothing. It is safe for concurrent use.
type Redactor struct {
	mu       sync.Mutex                 // serialises Add
	literals atomic.Pointer[literalSet] // nil when there are none
	patterns []secretPattern
}

// literalSet is an immutable set of exact values and their replacer.
type literalSet struct {
	values []string
	seen   map[string]bool
	rep    *strings.Replacer
}

// with returns a new set holding s's values and vals' Literals, or s
// itself when none is new.
func (s *literalSet) with(vals []string) *literalSet {
	next := &literalSet{seen: map[string]bool{}}
	if s != nil {
		next.values = slices.Clone(s.values)
		maps.Copy(next.seen, s.seen)
	}
	added := false
	for _, v := range vals {
		for _, l := range secret.Forms(v) {
			if !next.seen[l] {
				next.seen[l] = true
				next.values = append(next.values, l)
				added = true
			}
		}
	}
	if !added {
		return s
	}
	// Longest first, so a secret containing another is replaced whole.
	sort.SliceStable(next.values, func(i, j int) bool { return len(next.values[i]) > len(next.values[j]) })
	pairs := make([]string, 0, 2*len(next.values))
	for _, l := range next.values {
		pairs = append(pairs, l, Redacted)
	}
	next.rep = strings.NewReplacer(pairs...)
	return next
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
// os.Environ returns: those whose name or value looks secret, the rule of
// the tools' environment scrub) and extra secret values (the provider key,
// tokens read from files), plus the token shapes. Values shorter than
// MinSecretLen are ignored.
func NewRedactor(environ []string, extra ...string) *Redactor {
	r := NewLiteralRedactor(environ, extra...)
	r.patterns = tokenPatterns()
	return r
}

// NewLiteralRedactor is NewRedactor without the token shapes: only the
// exact values are replaced (what a tool result sent to the model gets,
// where a test fixture shaped like a token must stay readable).
func NewLiteralRedactor(environ []string, extra ...string) *Redactor {
	var vals []string
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if ok && (IsSecretName(name) || secret.IsValue(val)) {
			vals = append(vals, val)
		}
	}
	r := &Redactor{}
	r.Add(append(vals, extra...)...)
	return r
}

// Add makes the Redactor replace vals (and their secret.Forms) from
// now on; what was redacted before is not redone. It reports whether any
// value was new.
func (r *Redactor) Add(vals ...string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.literals.Load()
	next := cur.with(vals)
	if next == cur {
		return false
	}
	r.literals.Store(next)
	return true
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
	if lits := r.literals.Load(); lits != nil {
		s = lits.rep.Replace(s)
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
