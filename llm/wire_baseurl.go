package llm

import (
	"fmt"
	"net/url"
	"strings"
)

// Path is the endpoint path the wire appends to its base URL.
func (w Wire) Path() string {
	switch w {
	case WireResponses:
		return "/responses"
	case WireAnthropic:
		return "/messages"
	}
	return "/chat/completions"
}

// CheckBaseURL refuses a base URL that already ends in a wire's endpoint
// path (".../v1/chat/completions"): the wire would append it again. The
// error names the URL without that suffix.
func CheckBaseURL(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return nil // the client reports a malformed URL with its own words
	}
	path := strings.TrimRight(u.Path, "/")
	for _, w := range []Wire{WireChat, WireResponses, WireAnthropic} {
		suffix := w.Path()
		if !strings.HasSuffix(path, suffix) {
			continue
		}
		fixed := *u
		fixed.Path = strings.TrimSuffix(path, suffix)
		fixed.RawPath = ""
		return fmt.Errorf("%w: base URL %s ends in %s, the path the %s wire appends itself; "+
			"drop that suffix and use %s", ErrConfig, base, suffix, w, fixed.String())
	}
	return nil
}
