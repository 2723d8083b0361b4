package githubtest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"testing"
)

// Zip returns a zip archive holding files (name → content), as
// upload-artifact makes them.
func Zip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err == nil {
			_, err = w.Write([]byte(content))
		}
		if err != nil {
			t.Fatalf("githubtest: zip %s: %v", name, err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("githubtest: zip: %v", err)
	}
	return buf.Bytes()
}

// Redirect replies 302 Found with a Location header.
func Redirect(location string) Responder {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, location, http.StatusFound)
	}
}

// Artifact is one stored workflow run artifact the fake serves.
type Artifact struct {
	ID          int64
	Name        string
	WorkflowRun int64
	Expired     bool
	Zip         []byte
}

// Artifact stubs the three requests that fetch an artifact the way the
// Actions API serves it: the workflow run's artifact list (GET
// /repos/{o}/{r}/actions/runs/{run}/artifacts), the download (GET
// .../actions/artifacts/{id}/zip, a 302 to a pre-signed URL) and the
// archive at that URL, which must come without the API token (the test
// fails when an Authorization header reaches it). An expired artifact is
// listed only: its download is never asked for. The stubs answer once
// each.
func (reg *Registry) Artifact(owner, repo string, a Artifact) {
	reg.t.Helper()
	list := map[string]any{"total_count": 1, "artifacts": []any{map[string]any{
		"id": a.ID, "name": a.Name, "size_in_bytes": len(a.Zip), "expired": a.Expired,
		"expires_at":           "2026-03-01T00:00:00Z",
		"archive_download_url": fmt.Sprintf("%srepos/%s/%s/actions/artifacts/%d/zip", reg.BaseURL(), owner, repo, a.ID),
		"workflow_run":         map[string]any{"id": a.WorkflowRun},
	}}}
	reg.Register(http.MethodGet, fmt.Sprintf("/repos/%s/%s/actions/runs/%d/artifacts", owner, repo, a.WorkflowRun), JSON(http.StatusOK, list))
	if a.Expired {
		return
	}
	blob := fmt.Sprintf("/_blob/artifact-%d.zip", a.ID)
	reg.Register(http.MethodGet, fmt.Sprintf("/repos/%s/%s/actions/artifacts/%d/zip", owner, repo, a.ID),
		Redirect(reg.Server.URL+reg.prefix+blob))
	t := reg.t
	reg.Register(http.MethodGet, blob, func(w http.ResponseWriter, r *http.Request) {
		if auth := r.Header.Get("Authorization"); auth != "" {
			t.Errorf("githubtest: the artifact's pre-signed URL got an Authorization header (%.12s…): the token leaks to blob storage", auth)
		}
		w.Header().Set("Content-Type", "application/zip")
		_, _ = w.Write(a.Zip)
	})
}
