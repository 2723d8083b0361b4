package e2e

import (
	"encoding/base64"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/internal/gittest"
	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/tools/mcp/mcptest"
)

// TestAttackRedirectKeepsCredentials plays issue 30's fourth and fifth
// attacks. Three servers the runner sends credentials to answer with a
// 307 to another port of 127.0.0.1: an MCP HTTP server (Authorization and
// X-Api-Key configured in the spec), the model endpoint (the API key) and
// the GitHub API (the job's token). The servers behind the redirects get
// every request and none of those headers. The control: an MCP server
// reached without a redirect gets both headers. A file read through it
// holds the server's token in base64; the model gets it redacted.
func TestAttackRedirectKeepsCredentials(t *testing.T) {
	const (
		mcpToken = "mcp-token-0123456789abcdefXYZ"
		mcpKey   = "mcp-key-9876543210zyxwvu"
	)
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	blob := base64.StdEncoding.EncodeToString([]byte("svc:" + mcpToken))
	mustWriteFile(t, filepath.Join(base, "blob.txt"), "config="+blob+"\n")
	mustWriteFile(t, filepath.Join(repo, "README"), "small\n")
	gittest.Run(t, repo, "init", "-q", "-b", "master")
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "-m", "init")

	var direct, moved headerLog
	directSrv := httptest.NewServer(direct.wrap(mcptest.Handler(&mcptest.Recorder{})))
	t.Cleanup(directSrv.Close)
	movedSrv := httptest.NewServer(moved.wrap(mcptest.Handler(&mcptest.Recorder{})))
	t.Cleanup(movedSrv.Close)
	mcpRedirect := redirector(t, movedSrv.URL)

	model := newModel(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{
			llmtest.Call("mcp__direct__read", `{"text":"`+filepath.Join(base, "blob.txt")+`"}`),
			llmtest.Call("mcp__moved__echo", `{"text":"hello"}`)}}.Reply(),
		llmtest.Turn{Text: "Done."}.Reply())
	modelRedirect := redirector(t, model.URL())
	gh := newFakeGitHub(t)
	gh.perms["sample-author"] = "write"
	ghRedirect := redirector(t, gh.reg.Server.URL)

	headers := `{Authorization: "Bearer ${MCP_TOKEN}", X-Api-Key: "${MCP_KEY}"}`
	spec := filepath.Join(base, "task.yaml")
	mustWriteFile(t, spec, "version: 1\nname: redirect\nmodel: gpt-4.1-mini\nprompt: Read it.\n"+
		"permissions:\n  read: allow\n  mcp: {\"direct/*\": allow, \"moved/*\": allow}\nlimits: {max_steps: 4}\n"+
		"mcp:\n  servers:\n"+
		"    direct: {url: \""+directSrv.URL+"/mcp\", headers: "+headers+"}\n"+
		"    moved: {url: \""+mcpRedirect.URL+"/mcp\", headers: "+headers+"}\n")
	payload, err := os.ReadFile(filepath.Join(repoRoot, "github", "testdata", "events", "issue_comment.created.issue.json"))
	if err != nil {
		t.Fatal(err)
	}
	a := newActionsRun(t, "issue_comment", string(payload), ghRedirect.URL+"/api/v3", "https://github.com",
		"GITHUB_TOKEN="+actToken, "MCP_TOKEN="+mcpToken, "MCP_KEY="+mcpKey, "RUNNER_COMMENT=true")
	res := runRunner(t, repo, a.env, "exec", spec, "--out", filepath.Join(base, "out"), "--base-url", modelRedirect.URL+"/v1")
	if res.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", res.code, res.stderr)
	}

	// The control: without a redirect the server gets both headers.
	if auth, n := direct.values("Authorization"); n == 0 || !slices.Contains(auth, "Bearer "+mcpToken) {
		t.Fatalf("the control: the direct MCP server got Authorization %q in %d requests", auth, n)
	}
	if key, _ := direct.values("X-Api-Key"); !slices.Contains(key, mcpKey) {
		t.Fatalf("the control: the direct MCP server got X-Api-Key %q", key)
	}
	for name, l := range map[string]*headerLog{"MCP server behind a redirect": &moved} {
		auth, n := l.values("Authorization")
		key, _ := l.values("X-Api-Key")
		if n == 0 {
			t.Errorf("%s got no request: the redirect was not followed", name)
		}
		if len(auth) > 0 || len(key) > 0 {
			t.Errorf("%s got Authorization %q, X-Api-Key %q", name, auth, key)
		}
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests through the redirect, want 2", len(reqs))
	}
	for i, r := range reqs {
		if v := r.Header.Get("Authorization"); v != "" {
			t.Errorf("model request %d behind a redirect came with Authorization %q", i+1, v)
		}
	}
	auths := gh.authorizations()
	if len(auths) == 0 {
		t.Error("the GitHub API behind a redirect got no request")
	}
	for _, v := range auths {
		if v != "" {
			t.Errorf("the GitHub API behind a redirect got Authorization %q", v)
		}
	}
	// The MCP server's token, base64-encoded in what it returned, reached
	// the model redacted.
	tr := toolResults(reqs[1].Messages())
	if !strings.Contains(tr, "config=") || strings.Contains(tr, blob) || !strings.Contains(tr, "[REDACTED]") {
		t.Errorf("the MCP tool result the model got:\n%s\nwant config= with the base64 token redacted", tr)
	}
}
