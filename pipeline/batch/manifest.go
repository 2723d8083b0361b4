package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed43ef5acb/runner/secret"
)

// ManifestFile is the manifest's name inside an out dir.
const ManifestFile = "manifest.json"

// Manifest is the ordered repository list of a batch, frozen at the start
// of the first run in out/manifest.json so that every shard and every
// resumed run sees the same list and ids.
type Manifest struct {
	Version int    `json:"version"`
	Name    string `json:"name"`
	Repos   []Repo `json:"repos"`
}

// Repo is one repository of the manifest. Path is kept as written in the
// spec (relative to the batch file) so the manifest is portable between
// machines that check the batch file out at different places.
type Repo struct {
	ID     string            `json:"id"`
	URL    string            `json:"url,omitempty"`
	Path   string            `json:"path,omitempty"`
	Ref    string            `json:"ref,omitempty"`
	Inputs map[string]string `json:"inputs,omitempty"`
}

// Source is the repository as the user named it, its URL or its path,
// with a URL's credentials redacted (secret.RedactURLCredentials): what
// results, logs and reports name.
func (r Repo) Source() string {
	if r.URL != "" {
		return secret.RedactURLCredentials(r.URL)
	}
	return r.Path
}

// MarshalJSON writes the repository with its URL's credentials redacted:
// manifest.json never holds them; the clone takes them from the spec.
func (r Repo) MarshalJSON() ([]byte, error) {
	type plain Repo
	p := plain(r)
	p.URL = secret.RedactURLCredentials(p.URL)
	return json.Marshal(p)
}

// equal compares two repositories as manifest.json records them (a URL's
// credentials redacted).
func (r Repo) equal(o Repo) bool {
	return r.ID == o.ID && secret.RedactURLCredentials(r.URL) == secret.RedactURLCredentials(o.URL) &&
		r.Path == o.Path && r.Ref == o.Ref && maps.Equal(r.Inputs, o.Inputs)
}

// BuildManifest lists the spec's repositories in order with stable,
// unique ids: an explicit "id", else one derived from the URL or path and
// the ref (RepoID); a derived id that is already taken gets "-2", "-3", ….
// Two explicit ids that collide are a spec error.
func BuildManifest(s *Spec) (*Manifest, error) {
	m := &Manifest{Version: SpecVersion, Name: s.Name}
	taken := map[string]string{} // id → position that took it
	var errs SpecErrors
	for _, r := range s.Repos {
		if r.ID == "" {
			continue
		}
		if prev, dup := taken[r.ID]; dup {
			errs = append(errs, specErrorAt(r.Pos, fmt.Sprintf("duplicate repository id %q (first at %s)", r.ID, prev)))
		}
		taken[r.ID] = r.Pos
	}
	if len(errs) > 0 {
		return nil, errs
	}
	for _, r := range s.Repos {
		id := r.ID
		if id == "" {
			id = uniqueID(RepoID(r.URL, r.Path, r.Ref), taken)
			taken[id] = r.Pos
		}
		m.Repos = append(m.Repos, Repo{ID: id, URL: r.URL, Path: r.Path, Ref: r.Ref, Inputs: r.Inputs})
	}
	return m, nil
}

func uniqueID(base string, taken map[string]string) string {
	if _, ok := taken[base]; !ok {
		return base
	}
	for i := 2; ; i++ {
		id := fmt.Sprintf("%s-%d", base, i)
		if _, ok := taken[id]; !ok {
			return id
		}
	}
}

// specErrorAt builds a SpecError from a "file:line:col" position.
func specErrorAt(pos, msg string) *SpecError {
	se := &SpecError{File: pos, Msg: msg}
	parts := strings.Split(pos, ":")
	if n := len(parts); n >= 3 {
		var line, col int
		if _, err := fmt.Sscanf(parts[n-2]+" "+parts[n-1], "%d %d", &line, &col); err == nil {
			se.File, se.Line, se.Col = strings.Join(parts[:n-2], ":"), line, col
		}
	}
	return se
}

// RepoID derives a stable id from a repository URL or path and a ref:
// "https://github.com/org/repo.git" → "github.com-org-repo", with ref "v2"
// → "github.com-org-repo-v2"; "git@github.com:org/repo" → the same as https;
// "../repos/a" → "repos-a". Only letters, digits, '.', '_' and '-' remain.
func RepoID(url, path, ref string) string {
	src := path
	if url != "" {
		src = url
		if i := strings.Index(src, "://"); i >= 0 {
			src = src[i+3:]
		} else if at := strings.Index(src, "@"); at >= 0 {
			src = strings.Replace(src[at+1:], ":", "/", 1)
		}
		if at := strings.Index(src, "@"); at >= 0 && at < strings.Index(src+"/", "/") {
			src = src[at+1:] // user@host/…
		}
	}
	src = strings.TrimSuffix(strings.TrimRight(src, "/"), ".git")
	if ref != "" {
		src += "-" + ref
	}
	id := sanitize(src)
	if id == "" {
		return "repo"
	}
	return id
}

// sanitize keeps [A-Za-z0-9._-], maps everything else to '-', collapses
// runs of '-' and trims leading and trailing '-' and '.'.
func sanitize(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_'
		switch {
		case ok:
			b.WriteRune(c)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-.")
}

// FreezeManifest writes m to dir/manifest.json when there is none and
// returns it; when one exists it must list the same repositories (else
// ErrManifestMismatch) and m is returned: the stored one has no URL
// credentials.
func FreezeManifest(dir string, m *Manifest) (*Manifest, error) {
	stored, err := ReadManifest(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := writeJSONAtomic(filepath.Join(dir, ManifestFile), m); err != nil {
			return nil, fmt.Errorf("write manifest: %w", err)
		}
		return m, nil
	case err != nil:
		return nil, err
	}
	if err := sameRepos(stored, m); err != nil {
		return nil, fmt.Errorf("%s: %w: %w (this out dir belongs to the earlier list of repositories; --redo does not change that: "+
			"use a new --out directory, or delete %s to start over)",
			filepath.Join(dir, ManifestFile), ErrManifestMismatch, err, dir)
	}
	m.Version, m.Name = stored.Version, stored.Name
	return m, nil
}

func sameRepos(a, b *Manifest) error {
	if len(a.Repos) != len(b.Repos) {
		return fmt.Errorf("%s stored, %d in the spec", Repositories(len(a.Repos)), len(b.Repos))
	}
	for i := range a.Repos {
		if !a.Repos[i].equal(b.Repos[i]) {
			return fmt.Errorf("repository %d differs: stored %q, spec %q", i, a.Repos[i].ID, b.Repos[i].ID)
		}
	}
	return nil
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("parse %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return &m, nil
}

// writeJSONAtomic writes v as indented JSON through a temporary file,
// synced, and a rename, so readers never see a half-written file.
func writeJSONAtomic(path string, v any) error {
	return writeJSON(path, v, true)
}

// writeJSON is writeJSONAtomic; without sync the file may be lost on a
// crash of the machine (not of the process), which suits files mirrored
// from results.jsonl.
func writeJSON(path string, v any, sync bool) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create dir: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("create temp file: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := syncIf(tmp, sync); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename to %s: %w", path, err)
	}
	return nil
}

func syncIf(f *os.File, sync bool) error {
	if !sync {
		return nil
	}
	return f.Sync()
}
