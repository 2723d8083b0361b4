package secret

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
)

// wrappers are the texts tools put around a credential before encoding
// it whole: the basic-auth user name of GitHub's tokens. Any other prefix
// ("user:V", "Authorization: basic …") is caught by Encodings' aligned
// base64 fragments, which match at every offset.
func wrappers() []string { return []string{"x-access-token:"} }

// Encodings returns the forms of v that tools print when they encode it:
//   - base64, standard and URL alphabets, with and without padding, of v
//     and of v behind each of wrappers;
//   - for each of the three byte alignments, the base64 characters that
//     depend on v alone, so v encoded inside any longer text ("user:v",
//     an Authorization header's value, a JSON blob) is found too;
//   - hex, lower and upper case;
//   - percent-encoding: query and path escaping, and every byte escaped.
//
// Forms shorter than MinLen, and v itself, are left out. Reversed, split
// or otherwise obfuscated values are not caught: that is the sandbox's job.
func Encodings(v string) []string {
	if len(v) < MinLen {
		return nil
	}
	var out []string
	add := func(s string) {
		if len(s) >= MinLen && s != v && !contains(out, s) {
			out = append(out, s)
		}
	}
	encs := []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}
	for _, w := range append([]string{""}, wrappers()...) {
		for _, e := range encs {
			add(e.EncodeToString([]byte(w + v)))
		}
	}
	for _, e := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := range 3 {
			add(alignedBase64(e, v, k))
		}
	}
	add(hex.EncodeToString([]byte(v)))
	add(strings.ToUpper(hex.EncodeToString([]byte(v))))
	add(url.QueryEscape(v))
	add(url.PathEscape(v))
	var up, low strings.Builder
	for _, b := range []byte(v) {
		fmt.Fprintf(&up, "%%%02X", b)
		fmt.Fprintf(&low, "%%%02x", b)
	}
	add(up.String())
	add(low.String())
	return out
}

// alignedBase64 is the part of the base64 text of v, preceded by k other
// bytes, made only of whole 3-byte groups of v: the characters that are
// the same whatever bytes surround v at that alignment.
func alignedBase64(e *base64.Encoding, v string, k int) string {
	buf := make([]byte, k, k+len(v))
	enc := e.EncodeToString(append(buf, v...))
	start := 0
	if k > 0 {
		start = 4 // the first group mixes the k bytes before v
	}
	end := 4 * ((k + len(v)) / 3) // a last partial group depends on what follows
	if end <= start {
		return ""
	}
	return enc[start:end]
}
