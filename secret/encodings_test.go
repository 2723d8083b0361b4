package secret

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
)

// TestFormsCatchEncodedSecret encodes a token the ways tools do, inside
// longer texts at every offset, and finds a Forms entry in each.
func TestFormsCatchEncodedSecret(t *testing.T) {
	const tok = "ghs_enc0123456789abcdefghijklmnopqrst"
	forms := Forms(tok)
	caught := func(text string) bool {
		for _, f := range forms {
			if strings.Contains(text, f) {
				return true
			}
		}
		return false
	}
	encs := map[string]*base64.Encoding{"std": base64.StdEncoding, "raw std": base64.RawStdEncoding,
		"url": base64.URLEncoding, "raw url": base64.RawURLEncoding}
	wraps := []string{"", "x-access-token:", "user:", "u:", "ab:", "Bearer ", `{"auth":"`}
	for name, e := range encs {
		for _, w := range wraps {
			for pad := range 3 {
				text := strings.Repeat("z", pad) + w + tok + strings.Repeat("!", pad)
				if enc := e.EncodeToString([]byte(text)); !caught(enc) {
					t.Errorf("base64 (%s) of %q: %s not caught", name, text, enc)
				}
			}
		}
	}
	header := "AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+tok))
	for name, text := range map[string]string{
		"header": header, "hex": hex.EncodeToString([]byte(tok)), "HEX": strings.ToUpper(hex.EncodeToString([]byte(tok))),
		"query": url.QueryEscape("a=" + tok), "path": url.PathEscape(tok),
	} {
		if !caught(text) {
			t.Errorf("%s %q not caught", name, text)
		}
	}
	// An unrelated base64 text is not.
	if caught(base64.StdEncoding.EncodeToString([]byte("x-access-token:ghs_other0123456789abcdefghijklmno"))) {
		t.Error("another token's base64 was caught")
	}
}

// TestEncodingsSkipShort: short values get no encodings.
func TestEncodingsSkipShort(t *testing.T) {
	if e := Encodings("short"); e != nil {
		t.Errorf("Encodings(short) = %q", e)
	}
}

func TestRedactURLCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"https://bob:hunter2-pw@git.example.com/a/b.git": "https://bob:[REDACTED]@git.example.com/a/b.git",
		"clone https://ghp_tok@github.com/o/r: failed":   "clone https://[REDACTED]@github.com/o/r: failed",
		"ssh://git@github.com/o/r.git":                   "ssh://git@github.com/o/r.git",
		"https://github.com/o/r and http://u:p@h/x":      "https://github.com/o/r and http://u:[REDACTED]@h/x",
		"git@github.com:o/r.git":                         "git@github.com:o/r.git",
		"https://h/path@x":                               "https://h/path@x",
	} {
		if got := RedactURLCredentials(in); got != want {
			t.Errorf("RedactURLCredentials(%q) = %q, want %q", in, got, want)
		}
	}
}
