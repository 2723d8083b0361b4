package secret

import (
	"strings"
	"testing"
)

// TestIsName: the names the scrub and the redactor disagreed on (and
// more), and names that only look secret.
func TestIsName(t *testing.T) {
	secret := []string{"OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "DB_CONNECTION_STRING", "DATABASE_URL_CONNSTR",
		"SESSION_SECRET", "SESSION_ID", "SENTRY_DSN", "GH_PAT", "NPM_AUTH", "NPM_AUTH_TOKEN", "SLACK_WEBHOOK_URL",
		"AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "DATABASE_PASSWORD", "STRIPE_APIKEY", "JWT_SIGNING", "MY_PW",
		"OAUTH_CLIENT", "COOKIE_KEY", "BEARER", "GPG_PASSPHRASE", "REQUEST_SIGNATURE", "DOCKER_CREDS", "SSH_KEY",
		"MYSQL_PWD", "SMTP_PASS", "PRIVATE_KEY_PEM", "AUTHORIZATION", "api_key", "Vault-Token", "CARD_PIN", "TOTP_OTP"}
	public := []string{"PATH", "LD_LIBRARY_PATH", "GOPATH", "PKG_CONFIG_PATH", "HOME", "PWD", "OLDPWD", "GIT_AUTHOR_NAME",
		"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "SSH_AUTH_SOCK", "GPG_KEY_ID", "KEYTIMEOUT", "XDG_SESSION_TYPE",
		"DBUS_SESSION_BUS_ADDRESS", "GIT_CONFIG_KEY_0", "BOOK_AUTHOR", "LANG", "TERM", "GOFLAGS", "SPINNER", "COMPASS"}
	for _, n := range secret {
		if !IsName(n) {
			t.Errorf("IsName(%q) = false, want true", n)
		}
	}
	for _, n := range public {
		if IsName(n) {
			t.Errorf("IsName(%q) = true, want false", n)
		}
	}
}

func TestIsValue(t *testing.T) {
	for v, want := range map[string]bool{
		"ghp_abcdefghijklmnopqrstuvwxyz0123": true, "sk-proj-0123456789abcdefXYZ": true, "AKIAABCDEFGHIJKLMNOP": true,
		"postgres://u:p4ss@db:5432/x": true, "-----BEGIN RSA PRIVATE KEY-----\nMII": true,
		"ghp_short": false, "https://example.com/a@b": false, "hello world": false, "sk-": false,
	} {
		if got := IsValue(v); got != want {
			t.Errorf("IsValue(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestLiterals: a URL-shaped secret is redacted whole and by its
// password alone (as written and percent-decoded); development defaults
// whose password is the user, the scheme, the host or the database are
// not turned into literals, nor are short ones.
func TestLiterals(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"postgres://app:s3cr3t-Pa55word@db.internal:5432/app", []string{"postgres://app:s3cr3t-Pa55word@db.internal:5432/app", "s3cr3t-Pa55word"}},
		{"mysql://u:p%40ss%2Fw0rd!@h/db?x=1", []string{"mysql://u:p%40ss%2Fw0rd!@h/db?x=1", "p%40ss%2Fw0rd!", "p@ss/w0rd!"}},
		{"redis://:only-a-password-1@cache:6379/0", []string{"redis://:only-a-password-1@cache:6379/0", "only-a-password-1"}},
		{"amqp://guest:p@ssw0rd-x@mq/vhost@x", []string{"amqp://guest:p@ssw0rd-x@mq/vhost@x", "p@ssw0rd-x"}},
		{"primary=https://a:first-password@h1/x replica=https://b:second-password@h2/y",
			[]string{"primary=https://a:first-password@h1/x replica=https://b:second-password@h2/y", "first-password", "second-password"}},
		{"postgres://postgres:postgres@postgres/postgres", []string{"postgres://postgres:postgres@postgres/postgres"}},
		{"postgres://app:app@localhost/app", []string{"postgres://app:app@localhost/app"}},
		{"postgres://app:pw@h/db", []string{"postgres://app:pw@h/db"}},
		{"https://example.com/a@b:c", []string{"https://example.com/a@b:c"}},
		{"  plain-secret-value  ", []string{"plain-secret-value"}},
		{"short", nil},
	} {
		got := Literals(tc.in)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("Literals(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
