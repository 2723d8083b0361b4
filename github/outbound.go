package github

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	gh "github.com/google/go-github/v60/github"
)

// Neutralized is one image, media tag or link the runner took out of text
// it posted: its kind ("image", "html", "link") and the host it named.
type Neutralized struct {
	Kind string `json:"kind"`
	Host string `json:"host,omitempty"`
}

var (
	// absURL is an http(s) or www. URL as GFM autolinks it; group 1 is its host.
	absURL = regexp.MustCompile(`(?i)\b(?:https?://|www\.)([a-z0-9\-._~%!$&'*+,;=:@\[\]]+)[^\s<>"'` + "`" + `]*`)
	// mediaTag opens an HTML element that makes the viewer's browser or
	// GitHub's image proxy fetch a URL.
	mediaTag = regexp.MustCompile(`(?i)<(img|image|picture|source|video|audio|track|input|embed|object|iframe|svg|use|link|meta)\b[^>]*>?`)
	// plainImage is an inline image whose destination is a plain https URL.
	plainImage = regexp.MustCompile(`^!\[[^\[\]\n]*\]\(https://([a-zA-Z0-9.\-]+)/[A-Za-z0-9/_.\-~%=?+]*\)`)
)

// NeutralizeMarkdown makes text safe to post: nothing in it makes GitHub
// fetch, or a reader click, a URL whose host allowed rejects.
//   - A Markdown image ("![") is escaped ("\![": a link, fetched by no
//     one) unless it is a plain https URL of an allowed host.
//   - An HTML media tag (<img>, <source>, <video>, …) is shown as text.
//   - An http(s) or www. URL of another host becomes inline code naming
//     the host only (`evil.example/…`): its path and query carry the data.
//
// Code blocks get the same treatment: deciding what GitHub renders as code
// is what an attacker would aim at. What was changed is returned.
func NeutralizeMarkdown(text string, allowed func(host string) bool) (string, []Neutralized) {
	var got []Neutralized
	var b strings.Builder
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], "![")
		if j < 0 {
			b.WriteString(text[i:])
			break
		}
		j += i
		b.WriteString(text[i:j])
		slashes := 0
		for k := j - 1; k >= 0 && text[k] == '\\'; k-- {
			slashes++
		}
		if m := plainImage.FindStringSubmatch(text[j:]); slashes%2 == 1 || m != nil && allowed(m[1]) {
			b.WriteString("![")
		} else {
			b.WriteString(`\![`)
			got = append(got, Neutralized{Kind: "image", Host: imageHost(text[j:])})
		}
		i = j + 2
	}
	text = mediaTag.ReplaceAllStringFunc(b.String(), func(tag string) string {
		host := ""
		if m := absURL.FindStringSubmatch(tag); m != nil {
			host = hostOf(m[1])
		}
		got = append(got, Neutralized{Kind: "html", Host: host})
		return "&lt;" + tag[1:]
	})
	text = absURL.ReplaceAllStringFunc(text, func(u string) string {
		host := hostOf(absURL.FindStringSubmatch(u)[1])
		if allowed(host) {
			return u
		}
		got = append(got, Neutralized{Kind: "link", Host: host})
		return "`" + strings.ReplaceAll(host, "`", "") + "/…`" + trailing(u)
	})
	return text, got
}

// trailing is the end of a matched URL that GFM leaves out of an autolink:
// punctuation, and closing parentheses without an opening one in the URL.
func trailing(u string) string {
	end := len(u)
	for end > 0 {
		c := u[end-1]
		if strings.IndexByte(".,:;!?*_~", c) < 0 &&
			(c != ')' || strings.Count(u[:end], "(") >= strings.Count(u[:end], ")")) {
			break
		}
		end--
	}
	return u[end:]
}

// imageHost is the host of the URL an image's text names, "" when it names none.
func imageHost(s string) string {
	end := strings.IndexAny(s, ")\n")
	if end < 0 {
		end = len(s)
	}
	if m := absURL.FindStringSubmatch(s[:end]); m != nil {
		return hostOf(m[1])
	}
	return ""
}

// hostOf is the lower-case host of an authority ("user@Host:443" → "host").
func hostOf(authority string) string {
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		authority = authority[i+1:]
	}
	if u, err := url.Parse("https://" + authority); err == nil && u.Hostname() != "" {
		return strings.ToLower(u.Hostname())
	}
	return strings.ToLower(authority)
}

// OwnHosts returns the host rule of NeutralizeMarkdown for e: github.com,
// any *.githubusercontent.com, and the server's and API's own hosts (GHES).
func OwnHosts(e *Env) func(host string) bool {
	own := map[string]bool{"github.com": true}
	for _, s := range []string{e.ServerURL, e.APIURL} {
		if u, err := url.Parse(s); err == nil && u.Hostname() != "" {
			own[strings.ToLower(u.Hostname())] = true
		}
	}
	return func(host string) bool {
		host = strings.ToLower(strings.TrimSuffix(host, "."))
		return own[host] || strings.HasSuffix(host, ".githubusercontent.com")
	}
}

// outbound is the transport every request to GitHub's API leaves through:
// it neutralizes the "body" and "title" strings of the JSON it sends
// (comments, reviews and their line comments, pull requests) and keeps
// what it changed until Take.
type outbound struct {
	base    http.RoundTripper
	allowed func(string) bool
	mu      sync.Mutex
	got     []Neutralized
}

func (o *outbound) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Method == http.MethodGet || req.Method == http.MethodHead {
		return o.base.RoundTrip(req)
	}
	data, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	var v any
	if json.Unmarshal(data, &v) == nil {
		if nv, got := o.walk("", v); len(got) > 0 {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(nv); err != nil {
				return nil, err
			}
			data = buf.Bytes()
			o.mu.Lock()
			o.got = append(o.got, got...)
			o.mu.Unlock()
		}
	}
	out := req.Clone(req.Context())
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	out.Header.Set("Content-Length", strconv.Itoa(len(data)))
	return o.base.RoundTrip(out)
}

// walk neutralizes the strings under the keys body and title of v.
func (o *outbound) walk(key string, v any) (any, []Neutralized) {
	var got []Neutralized
	switch t := v.(type) {
	case string:
		if key == "body" || key == "title" {
			return NeutralizeMarkdown(t, o.allowed)
		}
	case map[string]any:
		for k, e := range t {
			var g []Neutralized
			t[k], g = o.walk(k, e)
			got = append(got, g...)
		}
	case []any:
		for i, e := range t {
			var g []Neutralized
			t[i], g = o.walk(key, e)
			got = append(got, g...)
		}
	}
	return v, got
}

// Take returns what was neutralized since the last Take.
func (o *outbound) Take() []Neutralized {
	o.mu.Lock()
	defer o.mu.Unlock()
	got := o.got
	o.got = nil
	return got
}

// postedForm is body as c's transport posts it (NeutralizeMarkdown with
// its hosts): what GitHub then holds, for telling whether a comment or
// review already says body.
func postedForm(c *gh.Client, body string) string {
	if c == nil {
		return body
	}
	if out, ok := c.Client().Transport.(*outbound); ok {
		s, _ := NeutralizeMarkdown(body, out.allowed)
		return s
	}
	return body
}
