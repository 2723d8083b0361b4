package httpguard

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestRedirectToAnotherPortDropsCredentials: two listeners on 127.0.0.1;
// the first redirects to the second. A plain client sends the second the
// headers (the control); the guarded one does not, and a same-origin
// redirect keeps them.
func TestRedirectToAnotherPortDropsCredentials(t *testing.T) {
	var mu sync.Mutex
	got := map[string]http.Header{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = r.Header.Clone()
		mu.Unlock()
	}))
	defer other.Close()
	var first *httptest.Server
	first = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/stolen", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, first.URL+"/kept", http.StatusTemporaryRedirect)
		default:
			mu.Lock()
			got[r.URL.Path] = r.Header.Clone()
			mu.Unlock()
		}
	}))
	defer first.Close()
	hdr := http.Header{"Authorization": {"Bearer secret-token-1234"}, "X-Api-Key": {"key-5678-abcd"}}
	get := func(c *http.Client, path string, set bool) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, first.URL+path, nil)
		if set {
			for k, v := range hdr {
				req.Header[k] = v
			}
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// The control: net/http forwards both to another port of the same host.
	get(&http.Client{}, "/away", true)
	if got["/stolen"].Get("Authorization") == "" || got["/stolen"].Get("X-Api-Key") == "" {
		t.Fatalf("control: the plain client did not forward the headers (%v): the test cannot fail", got["/stolen"])
	}
	delete(got, "/stolen")
	for name, c := range map[string]*http.Client{
		"CheckRedirect": Client(nil),
		"HeaderTransport": {Transport: &HeaderTransport{Origins: []string{OriginOf(first.URL)}, Headers: hdr},
			CheckRedirect: CheckRedirect},
	} {
		get(c, "/away", name == "CheckRedirect")
		if h := got["/stolen"]; h == nil || h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
			t.Errorf("%s: the other origin got %v", name, h)
		}
		get(c, "/here", name == "CheckRedirect")
		if h := got["/kept"]; h.Get("Authorization") == "" || h.Get("X-Api-Key") == "" {
			t.Errorf("%s: a same-origin redirect lost the headers: %v", name, h)
		}
		delete(got, "/stolen")
		delete(got, "/kept")
	}
}

func TestOrigin(t *testing.T) {
	for raw, want := range map[string]string{
		"https://API.github.com/x": "https://api.github.com:443", "http://127.0.0.1:8080/a": "http://127.0.0.1:8080",
		"http://h/": "http://h:80",
	} {
		if got := OriginOf(raw); got != want {
			t.Errorf("OriginOf(%q) = %q, want %q", raw, got, want)
		}
	}
}
