package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed43ef5acb/runner/github/githubtest"
	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
)

// actionRepo is the action's repository, as a workflow names it.
const actionRepo = "seed43ef5acb/runner"

// releaseServer serves release assets as GitHub does, at
// /OWNER/REPO/releases/download/TAG/NAME, and records the paths asked.
type releaseServer struct {
	*httptest.Server
	mu   sync.Mutex
	got  []string
	tag  string
	file map[string][]byte
}

func newReleaseServer(t *testing.T, tag string, files map[string][]byte) *releaseServer {
	t.Helper()
	s := &releaseServer{tag: tag, file: files}
	prefix := "/" + actionRepo + "/releases/download/" + tag + "/"
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.got = append(s.got, r.URL.Path)
		s.mu.Unlock()
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		data, found := s.file[name]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(s.Close)
	return s
}

// requests are the paths asked so far.
func (s *releaseServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// releaseArchive builds the runner as the release does (static, stamped
// with tag) and packs it as goreleaser names it for this machine.
func releaseArchive(t *testing.T, tag string) (name string, data []byte) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "runner")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath",
		"-ldflags=-X github.com/seed43ef5acb/runner/pipeline.stampedVersion="+tag, "-o", bin, "./cmd/runner")
	cmd.Dir, cmd.Env = repoRoot, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []struct{ src, name string }{{bin, "runner"}, {filepath.Join(repoRoot, "LICENSE"), "LICENSE"}} {
		body, err := os.ReadFile(f.src)
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("runner_%s_linux_%s.tar.gz", strings.TrimPrefix(tag, "v"), runtime.GOARCH), buf.Bytes()
}

// installWorkspace is a commit of this checkout holding the install
// self-test workflow, which uses the action at ref.
func installWorkspace(t *testing.T, ref string) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	copyTracked(t, ws)
	wf, err := os.ReadFile(filepath.Join(repoRoot, "e2e", "testdata", "act", "install.yml"))
	if err != nil {
		t.Fatal(err)
	}
	wf = bytes.Replace(wf, []byte("uses: "+actionRepo+"@REF"), []byte("uses: "+actionRepo+"@"+ref), 1)
	if err := os.MkdirAll(filepath.Join(ws, ".github", "workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".github", "workflows", "install.yml"), wf, 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, ws, "init", "-q", "-b", "master")
	gittest.Run(t, ws, "add", "-A")
	gittest.Run(t, ws, "commit", "-q", "-m", "install self-test")
	gittest.Run(t, ws, "remote", "add", "origin", "https://github.com/"+actOwner+"/"+actRepo+".git")
	return ws
}

// runInstall runs the install self-test workflow of ws with the action at
// ref (a copy of ws).
func runInstall(t *testing.T, ws, ref string, model *llmtest.Server, rel *releaseServer) actResult {
	t.Helper()
	api := githubtest.New(t, "/api/v3")
	// The gate checks the pull request's author (the event's sample-author)
	// and asks who the token is (403, as for GITHUB_TOKEN).
	api.Register(http.MethodGet, "/repos/"+actOwner+"/"+actRepo+"/collaborators/"+actOwner+"/permission",
		githubtest.JSON(http.StatusOK, map[string]any{"permission": "admin", "role_name": "admin"})).AnyTimes(0)
	api.Register(http.MethodGet, "/user", githubtest.Error(http.StatusForbidden, "Resource not accessible by integration")).AnyTimes(0)
	start := time.Now()
	res := runActWorkflow(t, ws, ".github/workflows/install.yml", nil, model.URL(), api.Server.URL+"/api/v3", rel.URL,
		"--local-repository", actionRepo+"@"+ref+"="+ws)
	t.Logf("act with the action at %s: exit %d in %s", ref, res.code, time.Since(start).Round(time.Second))
	return res
}

// TestActionInstallsRelease: at a release tag the action downloads the
// tag's archive from the release server, checks it against checksums.txt
// and runs it, building nothing and caching nothing; an archive altered
// on the server is refused before anything runs.
func TestActionInstallsRelease(t *testing.T) {
	actBinary(t)
	const tag = "v0.9.1"
	name, archive := releaseArchive(t, tag)
	sum := sha256.Sum256(archive)
	sums := []byte(fmt.Sprintf("%x  runner_0.9.1_darwin_arm64.tar.gz\n%x  %s\n", sha256.Sum256(nil), sum, name))
	ws := installWorkspace(t, tag)

	t.Run("verified", func(t *testing.T) {
		model := newModel(t, llmtest.Turn{Text: "Hello."}.Reply())
		rel := newReleaseServer(t, tag, map[string][]byte{name: archive, "checksums.txt": sums})
		res := runInstall(t, ws, tag, model, rel)
		if res.code != 0 {
			t.Fatalf("act exited %d, want 0:\n%s", res.code, res.raw)
		}
		if out := res.outputs(t); out["status"] != "success" {
			t.Errorf("outputs %v, want status success", out)
		}
		if got := strings.TrimSpace(res.file(t, "version.txt")); got != "runner "+tag {
			t.Errorf("installed runner says %q, want %q", got, "runner "+tag)
		}
		want := fmt.Sprintf("runner: installed the release %s (%s, SHA-256 %x as checksums.txt lists)", tag, name, sum)
		if !strings.Contains(res.rawOutput(), want) {
			t.Errorf("the log does not say %q:\n%s", want, res.rawOutput())
		}
		if strings.Contains(res.rawOutput(), "building from source") {
			t.Errorf("the action built from source at a release tag:\n%s", res.rawOutput())
		}
		if c := res.file(t, "cache.txt"); c != "" {
			t.Errorf("a release install asked actions/cache for %q", c)
		}
		base := "/" + actionRepo + "/releases/download/" + tag + "/"
		if got := rel.requests(); !slices.Contains(got, base+"checksums.txt") || !slices.Contains(got, base+name) {
			t.Errorf("release server was asked %v, want checksums.txt and %s", got, name)
		}
	})

	t.Run("tampered", func(t *testing.T) {
		model := newModel(t)
		bad := slices.Clone(archive)
		bad[len(bad)/2] ^= 0xff
		rel := newReleaseServer(t, tag, map[string][]byte{name: bad, "checksums.txt": sums})
		res := runInstall(t, ws, tag, model, rel)
		if res.code == 0 {
			t.Fatalf("act exited 0 with a tampered archive:\n%s", res.raw)
		}
		badSum := sha256.Sum256(bad)
		want := fmt.Sprintf("%s from %s/%s/releases/download/%s has SHA-256 %x, but checksums.txt says %x: "+
			"the archive was altered or damaged; refusing it", name, rel.URL, actionRepo, tag, badSum, sum)
		if e := res.commands("error"); len(e) != 1 || e[0].Arg != want {
			t.Errorf("::error lines %+v, want one saying %q", e, want)
		}
		if got := res.file(t, "version.txt"); got != "" {
			t.Errorf("a runner was installed from the tampered archive: %q", got)
		}
		if n := len(model.Requests()); n != 0 {
			t.Errorf("the model got %d requests: the run went ahead", n)
		}
		if got := strings.TrimSpace(res.file(t, "outcome.txt")); got != "failure" {
			t.Errorf("step outcome %q, want failure", got)
		}
	})
}

// TestActionBuildsBranch: at a branch the action builds the runner from
// its source, says so, and asks actions/cache for Go's module and build
// caches under a key of its go.sum; it asks the release server nothing.
func TestActionBuildsBranch(t *testing.T) {
	actBinary(t)
	ws := installWorkspace(t, "main")
	model := newModel(t, llmtest.Turn{Text: "Hello."}.Reply())
	rel := newReleaseServer(t, "main", nil)
	res := runInstall(t, ws, "main", model, rel)
	if res.code != 0 {
		t.Fatalf("act exited %d, want 0:\n%s", res.code, res.raw)
	}
	if out := res.outputs(t); out["status"] != "success" {
		t.Errorf("outputs %v, want status success", out)
	}
	if want := "runner: building from source at main: main is not a release tag (vX.Y.Z)"; !strings.Contains(res.rawOutput(), want) {
		t.Errorf("the log does not say %q:\n%s", want, res.rawOutput())
	}
	if got := strings.TrimSpace(res.file(t, "version.txt")); !strings.HasPrefix(got, "runner ") {
		t.Errorf("runner version printed %q", got)
	}
	gosum, err := os.ReadFile(filepath.Join(repoRoot, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	sumHex := fmt.Sprintf("%x", sha256.Sum256(gosum))
	key := "key=runner-go-Linux-" + map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH] + "-" + sumHex[:16] + "\n"
	cache := res.file(t, "cache.txt")
	for _, want := range []string{key, "path=" + goEnv(t, "GOMODCACHE") + "\n" + goEnv(t, "GOCACHE")} {
		if !strings.Contains(cache, want) {
			t.Errorf("actions/cache was given %q, want %q in it", cache, want)
		}
	}
	if got := rel.requests(); len(got) != 0 {
		t.Errorf("a branch build asked the release server for %v", got)
	}
}
