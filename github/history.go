package github

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	gh "github.com/google/go-github/v60/github"
)

// A run that may be continued from a comment (the spec's github.continue)
// leaves its history as an Actions artifact of its workflow run, and says
// where in hidden markers: the pull request it opens carries PRMarker and
// HistoryRef.Marker, the sticky comment of each later run the newest
// HistoryRef.Marker. Both are trusted only when written by the token's
// identity (the pull request's author, the sticky comment's).

// HistoryArtifactPrefix starts the name of every history artifact:
// runner-history-<runner run id>.
const HistoryArtifactPrefix = "runner-history-"

// DefaultArtifactLimit bounds a history archive and each file taken from
// it, in bytes (256 MiB).
const DefaultArtifactLimit = 256 << 20

// HistoryArtifact is the artifact name of the runner run runID.
func HistoryArtifact(runID string) string { return HistoryArtifactPrefix + runID }

// HistoryRef says where a run left its history: the artifact of workflow
// run WorkflowRun (GITHUB_RUN_ID) named Artifact, holding runner run RunID.
type HistoryRef struct {
	WorkflowRun int64
	Artifact    string
	RunID       string
}

// refValue is what a marker value may hold (artifact names and run ids).
// Compiled on first use, as historyMarker: their counted repetitions make
// large programs (400 KB, 0.7 ms at every start of the binary, the
// sandbox helper's included).
var refValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]{1,200}$`) })

// historyMarker matches HistoryRef.Marker.
var historyMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<!-- runner:history workflow_run=([0-9]{1,20}) artifact=([A-Za-z0-9._-]{1,200}) run=([A-Za-z0-9._-]{1,200}) -->`)
})

// Valid reports whether the reference can be written as a marker and
// followed: a positive workflow run and plain names.
func (h HistoryRef) Valid() bool {
	return h.WorkflowRun > 0 && refValue().MatchString(h.Artifact) && refValue().MatchString(h.RunID)
}

// Marker is the hidden HTML comment that carries the reference:
// <!-- runner:history workflow_run=N artifact=NAME run=ID -->; "" when
// the reference is not Valid.
func (h HistoryRef) Marker() string {
	if !h.Valid() {
		return ""
	}
	return fmt.Sprintf("<!-- runner:history workflow_run=%d artifact=%s run=%s -->", h.WorkflowRun, h.Artifact, h.RunID)
}

// FindHistoryRef returns the last history marker in body.
func FindHistoryRef(body string) (HistoryRef, bool) {
	all := historyMarker().FindAllStringSubmatch(body, -1)
	if len(all) == 0 {
		return HistoryRef{}, false
	}
	m := all[len(all)-1]
	n, err := strconv.ParseInt(m[1], 10, 64)
	ref := HistoryRef{WorkflowRun: n, Artifact: m[2], RunID: m[3]}
	return ref, err == nil && ref.Valid()
}

// PRMarker is the hidden HTML comment a pull request the runner opens for
// task carries: <!-- runner:pr task=NAME -->.
func PRMarker(task string) string {
	r := strings.NewReplacer("--", "-", ">", "_", "\n", " ", "\r", " ")
	return markerPrefix + "pr task=" + r.Replace(task) + " -->"
}

// OpenedFor reports whether a pull request body carries task's PRMarker.
func OpenedFor(body, task string) bool { return strings.Contains(body, PRMarker(task)) }

// FetchHistory downloads the artifact ref names and extracts the files
// listed in names (file names at the archive's root; anything else in it
// is ignored) into dir, which must exist. The artifact is found among
// the workflow run's artifacts (every page); its zip comes from the
// archive URL the API redirects to, fetched with download (nil: a plain
// client), which never gets the API token: the URL is pre-signed. The
// archive is streamed to a temporary file in dir and read from there, so
// memory stays bounded whatever its size; the archive and each file are
// at most limit bytes (0: DefaultArtifactLimit). Errors: ErrArtifactNotFound,
// ErrArtifactExpired, ErrArtifactTooLarge, or the API's.
func FetchHistory(ctx context.Context, client *gh.Client, download *http.Client, owner, repo string, ref HistoryRef, dir string, names []string, limit int64) error {
	if limit <= 0 {
		limit = DefaultArtifactLimit
	}
	if download == nil {
		download = &http.Client{}
	}
	art, err := findArtifact(ctx, client, owner, repo, ref)
	if err != nil {
		return err
	}
	if art.GetSizeInBytes() > limit {
		return fmt.Errorf("%w: artifact %s is %d bytes, over %d", ErrArtifactTooLarge, ref.Artifact, art.GetSizeInBytes(), limit)
	}
	loc, resp, err := client.Actions.DownloadArtifact(ctx, owner, repo, art.GetID(), 0)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusGone {
			return fmt.Errorf("%w: artifact %s of workflow run %d", ErrArtifactExpired, ref.Artifact, ref.WorkflowRun)
		}
		return fmt.Errorf("github: download artifact %s: %w", ref.Artifact, err)
	}
	zipPath, err := downloadTo(ctx, download, loc.String(), dir, limit)
	if err != nil {
		return fmt.Errorf("github: download artifact %s: %w", ref.Artifact, err)
	}
	defer os.Remove(zipPath)
	return extract(zipPath, dir, names, limit)
}

// findArtifact finds the artifact named ref.Artifact among the workflow
// run's.
func findArtifact(ctx context.Context, client *gh.Client, owner, repo string, ref HistoryRef) (*gh.Artifact, error) {
	opts := &gh.ListOptions{PerPage: 100}
	var expired *gh.Artifact
	for {
		list, resp, err := client.Actions.ListWorkflowRunArtifacts(ctx, owner, repo, ref.WorkflowRun, opts)
		if err != nil {
			if isStatus(err, http.StatusNotFound) {
				return nil, fmt.Errorf("%w: workflow run %d of %s/%s is gone", ErrArtifactNotFound, ref.WorkflowRun, owner, repo)
			}
			return nil, fmt.Errorf("github: list artifacts of workflow run %d: %w", ref.WorkflowRun, err)
		}
		for _, a := range list.Artifacts {
			if a.GetName() != ref.Artifact {
				continue
			}
			if !a.GetExpired() {
				return a, nil
			}
			expired = a
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if expired != nil {
		return nil, fmt.Errorf("%w: artifact %s of workflow run %d expired on %s", ErrArtifactExpired, ref.Artifact,
			ref.WorkflowRun, expired.GetExpiresAt().Format("2006-01-02"))
	}
	return nil, fmt.Errorf("%w: workflow run %d has no artifact %s", ErrArtifactNotFound, ref.WorkflowRun, ref.Artifact)
}

// downloadTo streams url into a new file in dir, at most limit bytes, and
// returns its path.
func downloadTo(ctx context.Context, client *http.Client, url, dir string, limit int64) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("archive URL answered %s", resp.Status)
	}
	f, err := os.CreateTemp(dir, "artifact-*.zip")
	if err != nil {
		return "", err
	}
	n, err := io.Copy(f, io.LimitReader(resp.Body, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fmt.Errorf("%w: the archive is over %d bytes", ErrArtifactTooLarge, limit)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// extract writes the archive's root entries named in names into dir.
func extract(zipPath, dir string, names []string, limit int64) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return fmt.Errorf("github: history artifact is not a zip archive: %w", err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if !slices.Contains(names, f.Name) || f.FileInfo().IsDir() {
			continue // only plain root names: "../x" or "a/b" never match
		}
		if f.UncompressedSize64 > uint64(limit) {
			return fmt.Errorf("%w: %s is %d bytes, over %d", ErrArtifactTooLarge, f.Name, f.UncompressedSize64, limit)
		}
		if err := extractFile(f, filepath.Join(dir, f.Name), limit); err != nil {
			return fmt.Errorf("github: history artifact: %s: %w", f.Name, err)
		}
	}
	return nil
}

// extractFile copies one entry to path, at most limit bytes whatever its
// header claims.
func extractFile(f *zip.File, path string, limit int64) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(rc, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fmt.Errorf("%w: over %d bytes", ErrArtifactTooLarge, limit)
	}
	if errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrFormat) {
		err = fmt.Errorf("corrupt archive: %w", err)
	}
	return err
}
