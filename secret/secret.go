// Package secret is the one rule for what a secret is, shared by the
// tools' environment scrub (a variable bash must not see) and the event
// redactor (a value that must not reach a log, a comment or a patch).
//
// Imports: the standard library only; it sits below every other package
// of the module.
package secret

import (
	"net/url"
	"strings"
)

// MinLen is the shortest value treated as a secret: shorter ones
// ("ollama", "dummy", "none") are placeholders, and hiding them would blank
// common words all over a log.
const MinLen = 8

// substrings mark a secret wherever they appear in a name (upper case).
func substrings() []string {
	return []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDS", "APIKEY", "API_KEY",
		"KEY", "PRIVATE", "COOKIE", "SESSION", "SIGNATURE", "JWT", "WEBHOOK", "CONNECTION_STRING", "CONNSTR",
		"BEARER", "AUTH"}
}

// parts mark a secret as a whole '_'-, '-'- or '.'-separated part of a
// name (upper case): short words that are parts of harmless words too
// (PATH holds PAT, PWD is the working directory).
func parts() []string { return []string{"PASS", "PAT", "PW", "PWD", "DSN", "PIN", "OTP"} }

// public are names that match a marker but hold no secret (upper case;
// a trailing '*' is a prefix).
func public() []string {
	return []string{"GIT_AUTHOR_*", "GIT_COMMITTER_*", "GIT_CONFIG_KEY_*", "SSH_AUTH_SOCK", "GPG_KEY_ID", "KEYTIMEOUT",
		"PWD", "OLDPWD", "XDG_SESSION_*", "DBUS_SESSION_BUS_ADDRESS", "SESSION_MANAGER", "XAUTHORITY", "KEYMAP"}
}

// IsName reports whether an environment variable named name holds a
// secret by the look of its name (case-insensitive): provider keys, forge
// tokens, passwords, credentials, connection strings, DSNs, webhooks,
// session and cookie secrets, signing keys. "AUTHOR" is not "AUTH"
// ("AUTHORIZATION" is).
func IsName(name string) bool {
	up := strings.ToUpper(name)
	for _, p := range public() {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(up, prefix) || up == p {
			return false
		}
	}
	bare := strings.ReplaceAll(strings.ReplaceAll(up, "AUTHORIZ", "AUTHZ"), "AUTHOR", "")
	for _, m := range substrings() {
		if strings.Contains(bare, m) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		for _, p := range parts() {
			if part == p {
				return true
			}
		}
	}
	return false
}

// tokenPrefixes are the prefixes of well-known token formats: GitHub,
// OpenAI and Anthropic, Slack, AWS, GitLab, Google, Hugging Face, npm,
// PyPI, JWTs.
func tokenPrefixes() []string {
	return []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "xoxb-", "xoxp-", "xoxa-", "xapp-",
		"AKIA", "ASIA", "glpat-", "AIza", "hf_", "npm_", "pypi-", "eyJ"}
}

// IsValue reports values shaped like a secret whatever their variable is
// called: a token format's prefix followed by at least 16 characters, a
// private key block, or a URL with a password in it.
func IsValue(v string) bool {
	for _, p := range tokenPrefixes() {
		if strings.HasPrefix(v, p) && len(v) >= len(p)+16 {
			return true
		}
	}
	if strings.Contains(v, "-----BEGIN ") && strings.Contains(v, "PRIVATE KEY") {
		return true
	}
	return urlPassword(v)
}

// urlPassword reports a URL with a password in it (scheme://user:pass@host).
func urlPassword(v string) bool {
	_, rest, ok := strings.Cut(v, "://")
	if !ok {
		return false
	}
	userinfo, _, ok := strings.Cut(rest, "@")
	if !ok || strings.ContainsAny(userinfo, "/?#") {
		return false
	}
	_, pass, ok := strings.Cut(userinfo, ":")
	return ok && pass != ""
}

// Literals returns the exact strings to redact for the secret value v: v
// itself (trimmed) and, for every URL in v with a password
// (scheme://user:pass@host…), the password as written and percent-decoded,
// so a command, a log line or an error that prints the password alone
// (a driver's config dump, `urlparse(...).password`) is caught too. Forms
// adds their encodings.
// Strings shorter than MinLen are left out, and so is a password that is
// the URL's user name or occurs in its scheme, host or path
// (postgres://postgres:postgres@postgres/postgres is a development default,
// and blanking "postgres" everywhere would hide the word, not a secret).
func Literals(v string) []string {
	v = strings.TrimSpace(v)
	var out []string
	add := func(s string) {
		if len(s) >= MinLen && !contains(out, s) {
			out = append(out, s)
		}
	}
	add(v)
	for _, pw := range urlPasswords(v) {
		add(pw)
	}
	return out
}

// Forms returns Literals(v) followed by the Encodings of each: every
// string a redactor replaces for the secret value v.
func Forms(v string) []string {
	out := Literals(v)
	for _, l := range out {
		for _, e := range Encodings(l) {
			if !contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}

// urlPasswords returns the passwords of the URLs in v with one: as
// written and, when it differs, percent-decoded.
func urlPasswords(v string) []string {
	var out []string
	for rest := v; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return out
		}
		scheme := rest[:i]
		if j := strings.LastIndexAny(scheme, " \t\n\"'`=<>(,;"); j >= 0 {
			scheme = scheme[j+1:]
		}
		rest = rest[i+3:]
		end := strings.IndexAny(rest, " \t\n\"'`<>")
		if end < 0 {
			end = len(rest)
		}
		authority := rest[:end]
		if k := strings.IndexAny(authority, "/?#"); k >= 0 {
			authority = authority[:k]
		}
		userinfo, _, ok := cutLast(authority, "@")
		if !ok {
			continue
		}
		after := rest[len(userinfo)+1 : end]
		user, pw, ok := strings.Cut(userinfo, ":")
		if !ok || pw == "" || pw == user || strings.Contains(scheme+"://"+after, pw) {
			continue
		}
		out = append(out, pw)
		if dec, err := url.PathUnescape(pw); err == nil && dec != pw && dec != user {
			out = append(out, dec)
		}
	}
}

// cutLast is strings.Cut at the last sep (a password may hold '@' that
// was not percent-encoded; the host never does).
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// RedactURLCredentials returns s with the credentials of every URL in it
// replaced by "[REDACTED]": the password of scheme://user:pass@host, and
// the user of http(s)://user@host, where a token often stands alone
// (https://TOKEN@github.com/…). ssh's git@host keeps its user.
func RedactURLCredentials(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i
		for j > 0 && isSchemeByte(s[j-1]) {
			j--
		}
		scheme := strings.ToLower(s[j:i])
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, " \t\r\n\"'`<>")
		if end < 0 {
			end = len(s)
		}
		authority := s[:end]
		if k := strings.IndexAny(authority, "/?#"); k >= 0 {
			authority = authority[:k]
		}
		userinfo, _, ok := cutLast(authority, "@")
		if !ok {
			continue
		}
		user, _, hasPass := strings.Cut(userinfo, ":")
		switch {
		case hasPass:
			b.WriteString(user + ":" + redactedMark + "@")
		case scheme == "http" || scheme == "https":
			b.WriteString(redactedMark + "@")
		default:
			b.WriteString(userinfo + "@")
		}
		s = s[len(userinfo)+1:]
	}
}

// Mark replaces a secret wherever one is redacted (event.Redacted).
const Mark = "[REDACTED]"

// redactedMark is Mark.
const redactedMark = Mark

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}
