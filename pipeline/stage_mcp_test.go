package pipeline

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed43ef5acb/runner/llm/llmtest"
	"github.com/seed43ef5acb/runner/runner/event"
	"github.com/seed43ef5acb/runner/tools/mcp/mcptest"
)

const mcpSecret = "mcp-value-0123456789abcdef"

// mcpSpec is a task with one stdio server (this test binary) and one HTTP
// server, echo and env allowed on the first, echo on the second.
func mcpSpec(t *testing.T, logPath, url string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := mcptest.Env(mcptest.ModeServe, logPath)
	return fmt.Sprintf(`version: 1
name: mcp
model: gpt-4.1-mini
prompt: Use the tools.
mcp:
  servers:
    local:
      command: [%q]
      env: {%s: %q, %s: %q, PLAIN: "${PLAIN_VALUE}", MCPTEST_SECRET: "${PLAIN_VALUE}"}
      timeout: 20s
    remote:
      url: %q
      headers: {Authorization: "Bearer ${REMOTE_TOKEN}"}
permissions:
  mcp:
    "local/echo": allow
    "local/env": allow
    "remote/*": allow
    "remote/denied": deny
limits: {max_steps: 3}
`, exe, strings.Split(env[0], "=")[0], strings.SplitN(env[0], "=", 2)[1],
		strings.Split(env[1], "=")[0], strings.SplitN(env[1], "=", 2)[1], url)
}

// TestExecWithMCPServers: the model calls tools of a stdio and an HTTP
// server; a denied tool is not offered and never reaches its server; the
// events name server and tool; a value the spec passes with ${NAME} is
// redacted from the log, the summary and the server's stderr file.
func TestExecWithMCPServers(t *testing.T) {
	specPath, repo := execFixture(t)
	logPath := filepath.Join(t.TempDir(), "local.log")
	remoteRec := &mcptest.Recorder{}
	hs := httptest.NewServer(mcptest.Handler(remoteRec))
	t.Cleanup(hs.Close)
	mustWrite(t, specPath, mcpSpec(t, logPath, hs.URL+"/mcp"))
	// The unknown (not offered) tool comes first: calls that succeed after
	// it keep the run a success.
	model := newModel(t, llmtest.ToolCalls(
		llmtest.Call("mcp__remote__denied", `{"text":"never"}`),
		llmtest.Call("mcp__local__echo", `{"text":"hi"}`),
		llmtest.Call("mcp__local__env", `{}`),
		llmtest.Call("mcp__remote__echo", `{"text":"there"}`),
	), llmtest.Text("Done."))
	out := t.TempDir()
	res, err := Exec(t.Context(), ExecOptions{Task: specPath, Repo: repo, Out: out, BaseURL: model.URL(),
		APIKey: "sk-unit-0123456789abcdef", Quiet: true,
		Environ: []string{"PATH=" + os.Getenv("PATH"), "PLAIN_VALUE=" + mcpSecret, "REMOTE_TOKEN=tok-0123456789abcdef"}})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if res.Status != event.StatusSuccess {
		t.Fatalf("status %s: %+v", res.Status, res.Error)
	}
	data, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs := validLog(t, data)
	got := map[string]string{}
	for _, r := range recs {
		if r.Type != "tool.completed" && r.Type != "tool.failed" {
			continue
		}
		var e struct {
			Tool   string         `json:"tool"`
			MCP    *event.MCPTool `json:"mcp"`
			Output string         `json:"output"`
			Error  string         `json:"error"`
		}
		if err := json.Unmarshal(r.Raw, &e); err != nil {
			t.Fatal(err)
		}
		origin := ""
		if e.MCP != nil {
			origin = e.MCP.Server + "/" + e.MCP.Tool
		}
		got[e.Tool] = r.Type + " " + origin + " " + e.Output + e.Error
	}
	for tool, want := range map[string]string{
		"mcp__local__echo":    "tool.completed local/echo echo: hi",
		"mcp__local__env":     "tool.completed local/env ",
		"mcp__remote__echo":   "tool.completed remote/echo echo: there",
		"mcp__remote__denied": `tool.failed  unknown tool "mcp__remote__denied"`,
	} {
		if !strings.HasPrefix(got[tool], want) {
			t.Errorf("%s: %q, want it to start with %q", tool, got[tool], want)
		}
	}
	// Its environment: the spec's env, PATH, and the sandbox's own HOME,
	// TMPDIR and git config; nothing else of the runner's.
	if !strings.Contains(got["mcp__local__env"], "PLAIN="+event.Redacted) || !strings.Contains(got["mcp__local__env"], "HOME="+filepath.Join(os.TempDir(), "runner-run-")) ||
		strings.Contains(got["mcp__local__env"], "REMOTE_TOKEN") {
		t.Errorf("env output: %q", got["mcp__local__env"])
	}
	for _, f := range []string{"events.jsonl", "summary.md", "result.json", "mcp/local.stderr"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), mcpSecret) || strings.Contains(string(b), "tok-0123456789abcdef") {
			t.Errorf("%s holds a secret the spec passed with ${NAME}", f)
		}
	}
	if remoteRec.Has(t, "call denied") {
		t.Error("the denied tool reached the server")
	}
	if !remoteRec.Has(t, "call echo there") {
		t.Errorf("remote log: %v", remoteRec.Log(t))
	}
	// The offered tools: the allowed ones, never the denied one.
	req := model.Requests()[0]
	var body struct {
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	raw, _ := json.Marshal(req.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	var offered []string
	for _, tl := range body.Tools {
		if strings.HasPrefix(tl.Function.Name, "mcp__") {
			offered = append(offered, tl.Function.Name)
		}
	}
	want := len(mcptest.ToolNames()) - 1 + 2 // remote: all but denied; local: echo and env
	if len(offered) != want || strings.Contains(strings.Join(offered, ","), "denied") {
		t.Errorf("offered MCP tools %v, want %d without denied", offered, want)
	}
}

// TestExecMCPStartErrors: a missing ${NAME} or program is an invalid task
// found before anything is written (exit 2, file:line:col); a server that
// does not start ends the run as an infrastructure error (exit 3) whose
// run.finished names the server.
func TestExecMCPStartErrors(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const head = "version: 1\nname: mcp\nmodel: m\nprompt: p\nmcp:\n  servers:\n"
	tests := []struct {
		name, servers string
		code          int
		want          string
	}{
		{"missing variable", "    s: {url: 'https://h.example/mcp', headers: {A: '${NOT_SET_ANYWHERE}'}}\n", ExitUsage,
			`task.yaml:7:52: mcp.servers.s.headers.A: ${NOT_SET_ANYWHERE} is not set in the runner's environment`},
		{"missing program", "    s: {command: [no-such-mcp-server-program]}\n", ExitUsage,
			`task.yaml:7:18: mcp.servers.s.command: exec: "no-such-mcp-server-program": executable file not found in $PATH`},
		{"crash at start", fmt.Sprintf("    s: {command: [%q], env: {MCPTEST_MODE: %s}}\n", exe, mcptest.ModeCrashStart), ExitInfra,
			`stdio server "s" exited during initialize (exit status 2)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specPath, repo := execFixture(t)
			mustWrite(t, specPath, head+tt.servers)
			model := newModel(t)
			out := filepath.Join(t.TempDir(), "out")
			res, err := Exec(t.Context(), ExecOptions{Task: specPath, Repo: repo, Out: out, BaseURL: model.URL(),
				APIKey: "sk-unit-0123456789abcdef", Quiet: true, Environ: []string{"PATH=" + os.Getenv("PATH")}})
			if ExitCode(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("exit %d, err:\n%v\nwant exit %d and %q", ExitCode(err), err, tt.code, tt.want)
			}
			if len(model.Requests()) != 0 {
				t.Error("the model was called")
			}
			if tt.code == ExitUsage {
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("an invalid task wrote its out dir: %v", err)
				}
				return
			}
			if !res.Reported || res.Error == nil || !strings.Contains(res.Error.Message, tt.want) {
				t.Errorf("result %+v", res)
			}
		})
	}
}
