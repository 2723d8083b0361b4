package github

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	gh "github.com/google/go-github/v60/github"
)

// bigArtifact serves a 32 MiB history (incompressible text) as artifact
// 9 of workflow run 42 and returns a client for it and the zip's size.
func bigArtifact(b *testing.B) (*gh.Client, int) {
	b.Helper()
	raw := make([]byte, 16<<20)
	_, _ = rand.Read(raw)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("history.jsonl")
	_, _ = w.Write([]byte(hex.EncodeToString(raw)))
	_ = zw.Close()
	data := buf.Bytes()
	mux := http.NewServeMux()
	mux.HandleFunc("/repos/o/r/actions/runs/42/artifacts", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"total_count":1,"artifacts":[{"id":9,"name":"h"}]}`)
	})
	var srv *httptest.Server
	mux.HandleFunc("/repos/o/r/actions/artifacts/9/zip", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/blob", http.StatusFound)
	})
	mux.HandleFunc("/blob", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) })
	srv = httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	c := gh.NewClient(nil)
	u, err := url.Parse(srv.URL + "/")
	if err != nil {
		b.Fatal(err)
	}
	c.BaseURL, c.UploadURL = u, u
	return c, len(data)
}

// BenchmarkFetchHistory measures the memory FetchHistory allocates for a
// 32 MiB history (B/op), against the peer that reads the archive into
// memory and unzips from there: streaming to disk keeps it at a few
// buffers whatever the artifact's size.
func BenchmarkFetchHistory(b *testing.B) {
	client, size := bigArtifact(b)
	ref := HistoryRef{WorkflowRun: 42, Artifact: "h", RunID: "r"}
	b.Run("stream-to-disk", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(size))
		for b.Loop() {
			dir := b.TempDir()
			if err := FetchHistory(b.Context(), client, nil, "o", "r", ref, dir, []string{"history.jsonl"}, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("in-memory-peer", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(size))
		for b.Loop() {
			art, err := findArtifact(b.Context(), client, "o", "r", ref)
			if err != nil {
				b.Fatal(err)
			}
			loc, _, err := client.Actions.DownloadArtifact(b.Context(), "o", "r", art.GetID(), 0)
			if err != nil {
				b.Fatal(err)
			}
			req, err := http.NewRequestWithContext(b.Context(), http.MethodGet, loc.String(), nil)
			if err != nil {
				b.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				b.Fatal(err)
			}
			rc, _ := zr.File[0].Open()
			content, _ := io.ReadAll(rc)
			_ = os.WriteFile(filepath.Join(b.TempDir(), "history.jsonl"), content, 0o644)
		}
	})
}
