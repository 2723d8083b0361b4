// Package secret is the one rule for what a secret is, shared by the
// tools' environment scrub (a variable bash must not see) and the event
// redactor (a value that must not reach a log, a comment or a patch).
//
// Imports: the standard library only; it sits below every other package
// of the module.
package secret

import "strings"

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
