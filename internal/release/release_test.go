// Package release tests the release configuration (.goreleaser.yaml) by
// building a snapshot release with goreleaser. It holds tests only, in
// their own package so that the cross builds do not eat into the e2e
// package's time budget.
package release

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the root of this repository.
const repoRoot = "../.."

// goreleaserBinary is goreleaser: .ci/bin/goreleaser of this checkout
// (bash .ci/run installs it there), else goreleaser on PATH; the test is
// skipped without it.
func goreleaserBinary(t *testing.T) string {
	t.Helper()
	if p, err := filepath.Abs(filepath.Join(repoRoot, ".ci", "bin", "goreleaser")); err == nil && isExecutable(p) {
		return p
	}
	if p, err := exec.LookPath("goreleaser"); err == nil {
		return p
	}
	t.Skip("goreleaser is not installed: `GOBIN=$PWD/.ci/bin go install github.com/goreleaser/goreleaser/v2@v2.17.0` " +
		"(bash .ci/run does this), then `make release-snapshot`")
	return ""
}

// releaseTargets are the platforms .goreleaser.yaml builds.
var releaseTargets = []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64"} //nolint:gochecknoglobals // a constant list

// TestReleaseSnapshot runs `goreleaser check` and a snapshot release of a
// commit of this checkout (as `make release-snapshot` does): an archive
// per platform with the licence, README and man page, checksums.txt that
// matches them, an SBOM per binary, and a static binary that reports the
// snapshot's version.
func TestReleaseSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("a snapshot release cross-compiles four binaries; skipped with -short")
	}
	gr := goreleaserBinary(t)
	ws := filepath.Join(t.TempDir(), "ws")
	copyTracked(t, ws)
	git(t, ws, "init", "-q", "-b", "main")
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "-q", "-m", "release snapshot test")
	// goreleaser reads the git state only with a remote; it is not contacted.
	git(t, ws, "remote", "add", "origin", "https://github.com/seed43ef5acb/runner.git")
	short := strings.TrimSpace(git(t, ws, "rev-parse", "--short=7", "HEAD"))
	env := append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "GOTOOLCHAIN=local", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")

	goreleaser := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), gr, args...)
		cmd.Dir, cmd.Env = ws, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("goreleaser %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goreleaser("check")
	goreleaser("release", "--snapshot", "--clean")

	dist := filepath.Join(ws, "dist")
	version := "0.0.1-snapshot-" + short
	sums := readChecksums(t, filepath.Join(dist, "checksums.txt"))
	for _, target := range releaseTargets {
		name := "runner_" + version + "_" + target + ".tar.gz"
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Errorf("archive %s: %v (dist holds %v)", name, err, dirNames(t, dist))
			continue
		}
		sum := sha256.Sum256(data)
		if got := sums[name]; got != hex.EncodeToString(sum[:]) {
			t.Errorf("checksums.txt has %q for %s, want its sha256 %x", got, name, sum)
		}
		files := untar(t, data, filepath.Join(t.TempDir(), target))
		for _, want := range []string{"runner", "LICENSE", "README.md", "CHANGELOG.md", "man/man1/runner.1"} {
			if !slices.Contains(files.names, want) {
				t.Errorf("%s lacks %s (it holds %v)", name, want, files.names)
			}
		}
		checkSBOM(t, filepath.Join(dist, "runner_"+version+"_"+target+".cdx.json"), "v"+version)
		if target == runtime.GOOS+"_"+runtime.GOARCH {
			bin := filepath.Join(files.dir, "runner")
			checkStatic(t, bin)
			for _, args := range [][]string{{"version"}, {"--version"}} {
				out, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput()
				if got, want := strings.TrimSpace(string(out)), "runner v"+version; err != nil || got != want {
					t.Errorf("runner %s: %q, %v; want %q", args[0], got, err, want)
				}
			}
		}
	}
}

// readChecksums reads a checksums.txt ("SHA256  NAME" lines) as name → sum.
func readChecksums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("%s: line %q is not SHA256  NAME", path, sc.Text())
		}
		sums[name] = sum
	}
	return sums
}

// untarred is an extracted archive: its directory and member names.
type untarred struct {
	dir   string
	names []string
}

// untar extracts the regular files of a .tar.gz into dir.
func untar(t *testing.T, data []byte, dir string) untarred {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	u := untarred{dir: dir}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return u
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || !filepath.IsLocal(h.Name) {
			continue
		}
		u.names = append(u.names, h.Name)
		dst := filepath.Join(dir, h.Name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, body, os.FileMode(h.Mode).Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// checkStatic fails unless bin is an ELF executable with no interpreter
// and no shared libraries: it runs in distroless and alpine images.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a dynamic loader (PT_INTERP): not static", bin)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v: not static", bin, libs)
	}
}

// checkSBOM fails unless path is a CycloneDX SBOM of the runner at version
// that lists kong among its modules.
func checkSBOM(t *testing.T, path, version string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("SBOM: %v", err)
		return
	}
	var bom struct {
		Format   string `json:"bomFormat"`
		Metadata struct {
			Properties []struct{ Name, Value string }
		}
		Components []struct{ PURL string }
	}
	if err := json.Unmarshal(data, &bom); err != nil || bom.Format != "CycloneDX" {
		t.Errorf("%s: format %q, %v", path, bom.Format, err)
		return
	}
	if !strings.Contains(string(data), "pkg:golang/github.com/alecthomas/kong@") {
		t.Errorf("%s does not list kong", path)
	}
	if !strings.Contains(string(data), `"purl": "pkg:golang/github.com/seed43ef5acb/runner@`+version+`"`) {
		t.Errorf("%s does not name the runner at %s", path, version)
	}
}

// dirNames lists a directory's entries, for messages.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// copyTracked copies this checkout's tracked files, as they are in the
// work tree, into dir; it skips the test outside a git checkout.
func copyTracked(t *testing.T, dir string) {
	t.Helper()
	files, err := exec.CommandContext(t.Context(), "git", "-C", repoRoot, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v): the snapshot is built from the tracked files", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		src := filepath.Join(repoRoot, f)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a symlink
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// git runs git in dir with a fixed identity and no user configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
