package pipeline

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFilterGitConfig: actions/checkout's header, credential helpers,
// includes and URLs with credentials are taken out and learnt; the rest
// of the file stays as written, and restoring gives back the original.
func TestFilterGitConfig(t *testing.T) {
	const tok = "ghs_filter0123456789abcdefghijklmnopq"
	b64 := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok))
	config := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n" +
		"[remote \"origin\"]\n\turl = https://x-access-token:url-secret-123@github.com/o/r\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n" +
		"[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic " + b64 + "\n\tsslVerify = true\n" +
		"[credential]\n\thelper = store --file /tmp/creds-file\n" +
		"[includeIf \"gitdir:/w/.git\"]\n\tpath = /runner/_temp/git-credentials-1.config\n" +
		"[url \"https://user:insteadof-secret-9@github.com/\"]\n\tinsteadOf = https://github.com/\n" +
		"[user]\n\tname = someone\n"
	f := filterGitConfig([]byte(config), "/w/.git", "/home/u")
	out := f.out.String()
	for _, gone := range []string{tok, b64, "url-secret-123", "extraheader", "credential", "includeIf", "insteadof-secret-9", "creds-file"} {
		if strings.Contains(out, gone) {
			t.Errorf("filtered config still holds %q:\n%s", gone, out)
		}
	}
	for _, kept := range []string{"repositoryformatversion = 0", "url = https://github.com/o/r", "sslVerify = true", "[user]", "name = someone"} {
		if !strings.Contains(out, kept) {
			t.Errorf("filtered config lost %q:\n%s", kept, out)
		}
	}
	for _, s := range []string{tok, b64, "url-secret-123", "insteadof-secret-9"} {
		if !strings.Contains(strings.Join(f.secrets, "\n"), s) {
			t.Errorf("secret %q not learnt: %q", s, f.secrets)
		}
	}
	if want := []string{"/tmp/creds-file", "/runner/_temp/git-credentials-1.config"}; strings.Join(f.includes, ",") != strings.Join(want, ",") {
		t.Errorf("includes %q, want %q", f.includes, want)
	}
	// Restore: unchanged file gets the original back; a changed one gets the
	// removed lines appended.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".git", "config")
	mustWrite(t, path, config)
	r := &execRun{workspaceState: workspaceState{workTree: dir}}
	if err := r.hideGitCredentials(t.Context()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != out {
		t.Errorf("config during the run:\n%s\nwant:\n%s", b, out)
	}
	if err := r.restoreGitCredentials(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != config {
		t.Errorf("config after the run:\n%s\nwant the original", b)
	}
	if err := r.hideGitCredentials(t.Context()); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, path, out+"[extra]\n\tx = 1\n")
	if err := r.restoreGitCredentials(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "[extra]") || !strings.Contains(string(b), b64) {
		t.Errorf("a changed config after the run:\n%s\nwant the change and the header back", b)
	}
}
