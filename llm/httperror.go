package llm

import (
	"bytes"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// requestLine is "METHOD URL" for an error message: the URL without its
// user info, query or fragment, which may hold a key (Gemini's ?key=).
func requestLine(req *http.Request) string {
	if req == nil || req.URL == nil {
		return ""
	}
	u := url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host, Path: req.URL.Path}
	return req.Method + " " + u.String()
}

// versionSegment matches a path segment naming an API version: v1, v1beta, v2.
var versionSegment = regexp.MustCompile(`(^|/)v[0-9]+[a-z0-9]*(/|$)`)

// versionHint is the advice for a 404 from an OpenAI-compatible base URL
// whose path names no API version: such base URLs end in /v1. It is ""
// when the status is not 404 or the path has a version.
func versionHint(status int, baseURL string) string {
	if status != http.StatusNotFound || baseURL == "" {
		return ""
	}
	u, err := url.Parse(baseURL)
	if err != nil || versionSegment.MatchString(u.Path) {
		return ""
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return "OpenAI-compatible base URLs usually end in /v1: try --base-url " +
		strings.TrimRight(u.String(), "/") + "/v1"
}

// nonTransient reports whether a 5xx status says the server will never
// answer this request, however long the runner waits: 501 Not
// Implemented, 505, 506, 508, 510 and 511 are not retried.
func nonTransient(status int) bool {
	switch status {
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported,
		http.StatusVariantAlsoNegotiates, http.StatusLoopDetected,
		http.StatusNotExtended, http.StatusNetworkAuthenticationRequired:
		return true
	}
	return false
}

var (
	htmlTitle = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	htmlDrop  = regexp.MustCompile(`(?is)<(script|style|head)[^>]*>.*?</(script|style|head)>`)
	htmlTag   = regexp.MustCompile(`(?s)<[^>]*>`)
)

// htmlExcerpt reduces an HTML error page (a proxy's or a web server's) to
// its title, else to the first 200 characters of its text. ok is false
// when body is not HTML.
func htmlExcerpt(body []byte) (text string, ok bool) {
	b := bytes.TrimSpace(body)
	lower := bytes.ToLower(b[:min(len(b), 512)])
	if !bytes.HasPrefix(lower, []byte("<!doctype html")) && !bytes.HasPrefix(lower, []byte("<html")) &&
		!bytes.Contains(lower, []byte("<head")) && !bytes.Contains(lower, []byte("<body")) {
		return "", false
	}
	if m := htmlTitle.FindSubmatch(b); m != nil {
		if t := collapse(html.UnescapeString(string(m[1]))); t != "" {
			return "HTML page: " + t, true
		}
	}
	t := collapse(html.UnescapeString(htmlTag.ReplaceAllString(htmlDrop.ReplaceAllString(string(b), " "), " ")))
	if t == "" {
		return "HTML page with no text", true
	}
	if r := []rune(t); len(r) > 200 {
		t = string(r[:200]) + "…"
	}
	return "HTML page: " + t, true
}

// collapse joins s's words with single spaces.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
