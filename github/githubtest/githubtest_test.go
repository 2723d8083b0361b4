package githubtest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) finish() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestRegistryFailsOnUnusedAndUnmatched(t *testing.T) {
	rec := &recorder{TB: t}
	reg := New(rec, "/api-v3")
	reg.Register(http.MethodGet, "/used", JSON(200, map[string]string{"ok": "1"}))
	reg.Register(http.MethodGet, "/unused", JSON(200, nil))
	c := reg.Client()
	req, _ := c.NewRequest(http.MethodGet, "used", nil)
	if _, err := c.Do(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(t.Context(), req, nil); err == nil { // a stub answers once
		t.Error("second request answered")
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, reg.Server.URL+"/outside", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	rec.finish()
	want := []string{"no stub for GET /api-v3/used", "outside the API prefix", "stub GET /unused map[] used 0 of 1"}
	if len(rec.errs) != len(want) {
		t.Fatalf("errors = %q", rec.errs)
	}
	for i, w := range want {
		if !strings.Contains(rec.errs[i], w) {
			t.Errorf("error %d = %q, want it to mention %q", i, rec.errs[i], w)
		}
	}
}

func TestPageLinks(t *testing.T) {
	reg := New(t, "/p")
	reg.Register(http.MethodGet, "/items", Page([]int{1}, 1, 2))
	reg.Register(http.MethodGet, "/items", Page([]int{2}, 2, 2)).WithQuery("page", "2")
	c := reg.Client()
	req, _ := c.NewRequest(http.MethodGet, "items", nil)
	var got []int
	resp, err := c.Do(t.Context(), req, &got)
	if err != nil || resp.NextPage != 2 || resp.LastPage != 2 {
		t.Fatalf("resp=%+v err=%v", resp, err)
	}
	req, _ = c.NewRequest(http.MethodGet, "items?page=2", nil)
	resp, err = c.Do(t.Context(), req, &got)
	if err != nil || resp.NextPage != 0 || got[0] != 2 {
		t.Fatalf("page 2: resp=%+v got=%v err=%v", resp, got, err)
	}
}

// TestServedInOrder: Served lists each request as it came, unmatched ones
// included, without prefix or query.
func TestServedInOrder(t *testing.T) {
	rec := &recorder{TB: t}
	reg := New(rec, "/api")
	reg.Register(http.MethodGet, "/a", JSON(200, nil))
	reg.Register(http.MethodPost, "/b", JSON(201, nil))
	c := reg.Client()
	for _, call := range []struct{ method, path string }{{http.MethodPost, "b?x=1"}, {http.MethodGet, "a"}, {http.MethodDelete, "c"}} {
		req, _ := c.NewRequest(call.method, call.path, nil)
		_, _ = c.Do(t.Context(), req, nil)
	}
	rec.finish()
	if got := strings.Join(reg.Served(), ", "); got != "POST /b, GET /a, DELETE /c" {
		t.Errorf("served %s", got)
	}
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "no stub for DELETE") {
		t.Errorf("errors %v", rec.errs)
	}
}
