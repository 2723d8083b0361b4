package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// yamlLanguageServer is the server's entry point as .ci/run installs it
// (npm install --prefix .ci/node yaml-language-server).
const yamlLanguageServer = "../../.ci/node/node_modules/yaml-language-server/bin/yaml-language-server"

// TestYAMLLanguageServer opens every example spec, a copy of one outside
// the repository, and the corpus specs in yaml-language-server (the engine
// of VS Code's YAML extension) and collects its diagnostics. The server
// fetches the schemas by their modeline URL through the client, as VS Code
// does; this client serves schema/ for the published URLs and nothing else.
// Valid specs must come out with no diagnostic (a schema that fails to load
// is one), specs the schema refuses with at least one.
func TestYAMLLanguageServer(t *testing.T) {
	node, server := yamlLanguageServerPaths(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The catalog as SchemaStore would serve it: the server fetches it itself.
	catalog := httptest.NewServer(http.FileServer(http.Dir(schemaDir)))
	defer catalog.Close()
	c := startLSP(ctx, t, node, server, catalog.URL+"/catalog.json", true)

	modeline := map[string]string{
		"task":  "# yaml-language-server: $schema=" + schemaBase + "task.schema.json\n",
		"batch": "# yaml-language-server: $schema=" + schemaBase + "batch.schema.json\n",
	}
	type doc struct {
		name, uri string
		clean     bool // no diagnostic expected
		checked   bool // false: the schema cannot judge it (inexpressible)
	}
	var docs []doc
	open := func(name, path string, text []byte, clean, checked bool) {
		abs, err := filepath.Abs(path)
		if err != nil {
			t.Fatal(err)
		}
		uri := (&url.URL{Scheme: "file", Path: abs}).String()
		c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": uri, "languageId": "yaml", "version": 1, "text": string(text)}})
		docs = append(docs, doc{name, uri, clean, checked})
	}
	examples := 0
	err := filepath.WalkDir("../../examples", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(data, []byte("# yaml-language-server:")) {
			if !bytes.HasPrefix(data, []byte(modeline["task"])) && !bytes.HasPrefix(data, []byte(modeline["batch"])) {
				t.Errorf("%s: the modeline is not the published schema's URL: %s", path, bytes.SplitN(data, []byte("\n"), 2)[0])
			}
			open(path, path, data, true, true)
			examples++
			if path == "../../examples/hello/task.yaml" {
				// Copied into another repository, the modeline still works.
				open("a copy of "+path, filepath.Join(t.TempDir(), "elsewhere", ".github", "task.yaml"), data, true, true)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// No modeline: the catalog's fileMatch patterns pick the schema.
	repo := t.TempDir()
	hello, err := os.ReadFile("../../examples/hello/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, hello, _ = bytes.Cut(hello, []byte("\n"))
	brokenTask := []byte("version: 1\nname: t\nprompt: p\nlimits: {timeout: 0s}\n")
	open("catalog: a valid .github/runner/*.yaml", filepath.Join(repo, ".github", "runner", "fix.yaml"), hello, true, true)
	open("catalog: a broken .github/runner/*.yaml", filepath.Join(repo, ".github", "runner", "broken.yaml"), brokenTask, false, true)
	open("catalog: a broken *.task.yml", filepath.Join(repo, "ci", "broken.task.yml"), brokenTask, false, true)
	open("catalog: a broken *.batch.yaml", filepath.Join(repo, "nightly.batch.yaml"),
		[]byte("version: 1\nname: b\ntask: t.yaml\nrepos: [x]\nconcurrency: 0\n"), false, true)
	open("catalog: a broken task elsewhere, which no pattern matches", filepath.Join(repo, "broken.yaml"), brokenTask, true, true)

	if examples < 10 {
		t.Fatalf("found %d example specs with a modeline", examples)
	}
	broken := 0
	for _, kind := range []string{"task", "batch"} {
		for _, s := range loadCorpus(t, kind) {
			data, err := os.ReadFile(s.path)
			if err != nil {
				t.Fatal(err)
			}
			_, listed := inexpressible[s.name]
			open(s.name, s.path, append([]byte(modeline[kind]), data...), s.ok, !listed)
			if !s.ok && !listed {
				broken++
			}
		}
	}

	diags := c.waitDiagnostics(ctx, len(docs))
	for _, d := range docs {
		got, ok := diags[d.uri]
		switch {
		case !ok:
			t.Errorf("%s: no diagnostics published", d.name)
		case d.clean && len(got) > 0:
			t.Errorf("%s: want no problem, got:\n  %s", d.name, strings.Join(got, "\n  "))
		case !d.clean && d.checked && len(got) == 0:
			t.Errorf("%s: the schema refuses it, yet yaml-language-server reported nothing", d.name)
		}
	}
	if foreign := c.foreignURLs(); len(foreign) > 0 {
		t.Errorf("yaml-language-server asked for schemas that are not published by this repository: %v", foreign)
	}
	if broken < 50 {
		t.Errorf("only %d broken specs checked", broken)
	}
}

// TestYAMLLanguageServerLocalFiles: a spec whose modeline names schema
// files by a relative path (an offline copy) validates with nothing
// fetched, the batch schema's relative $ref finding the task schema
// beside it, though its $id is a URL.
func TestYAMLLanguageServerLocalFiles(t *testing.T) {
	node, server := yamlLanguageServerPaths(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startLSP(ctx, t, node, server, "", false)
	dir := t.TempDir()
	for _, f := range []string{"task.schema.json", "batch.schema.json"} {
		data, err := os.ReadFile(filepath.Join(schemaDir, f))
		if err == nil {
			err = os.MkdirAll(filepath.Join(dir, "schemas"), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "schemas", f), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{ // clean?
		"batch/ok/every-key.yaml": true, "batch/ok/inline-task.yaml": true,
		"batch/bad/inline-task-timeout-zero.yaml": false, "batch/bad/inline-task-blank-prompt.yaml": false,
		"batch/bad/timeout-zero.yaml": false,
	}
	uris := map[string]string{}
	for _, s := range loadCorpus(t, "batch") {
		if _, ok := want[s.name]; !ok {
			continue
		}
		data, err := os.ReadFile(s.path)
		if err != nil {
			t.Fatal(err)
		}
		uri := (&url.URL{Scheme: "file", Path: filepath.Join(dir, "specs", filepath.Base(s.path))}).String()
		text := "# yaml-language-server: $schema=../schemas/batch.schema.json\n" + string(data)
		c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
		uris[s.name] = uri
	}
	if len(uris) != len(want) {
		t.Fatalf("found %d of the %d corpus specs", len(uris), len(want))
	}
	diags := c.waitDiagnostics(ctx, len(uris))
	for name, uri := range uris {
		got := diags[uri]
		switch {
		case want[name] && len(got) > 0:
			t.Errorf("%s: want no problem, got:\n  %s", name, strings.Join(got, "\n  "))
		case !want[name] && len(got) == 0:
			t.Errorf("%s: the schema refuses it, yet yaml-language-server reported nothing", name)
		}
	}
	if asked := c.foreignURLs(); len(asked) > 0 {
		t.Errorf("yaml-language-server fetched %v; the schemas beside each other should do", asked)
	}
}

// yamlLanguageServerPaths finds node and the server, or skips the test.
func yamlLanguageServerPaths(t *testing.T) (node, server string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: yaml-language-server needs it (.ci/run installs it with apt)")
	}
	server, err = filepath.Abs(yamlLanguageServer)
	if err == nil {
		_, err = os.Stat(server)
	}
	if err != nil {
		t.Skipf("yaml-language-server is not installed (npm install --prefix .ci/node yaml-language-server, as .ci/run does): %v", err)
	}
	return node, server
}

// lspClient is a minimal Language Server Protocol client over stdio.
type lspClient struct {
	t  *testing.T
	mu sync.Mutex
	w  io.Writer
	id int

	pending  map[int]chan lspMessage
	diags    chan lspDiagnostics
	foreign  []string // schema URLs asked for that are not schemaBase's
	settings map[string]any
	serve    bool // answer vscode/content for schemaBase from schema/
	stderr   bytes.Buffer
}

type lspMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type lspDiagnostics struct {
	URI         string `json:"uri"`
	Diagnostics []struct {
		Message string `json:"message"`
		Range   struct {
			Start struct{ Line, Character int } `json:"start"`
		} `json:"range"`
	} `json:"diagnostics"`
}

// yamlSettings are the client's settings: validate, with the schema
// catalog at catalogURL instead of SchemaStore's ("": none).
func yamlSettings(catalogURL string) map[string]any {
	return map[string]any{
		"validate":           true,
		"hover":              false,
		"completion":         false,
		"schemaStore":        map[string]any{"enable": catalogURL != "", "url": catalogURL},
		"kubernetesCRDStore": map[string]any{"enable": false},
		"format":             map[string]any{"enable": false},
	}
}

// startLSP starts the server and initializes it as VS Code's YAML
// extension does: schema content requested from the client.
// With serve false it fetches nothing for the server.
func startLSP(ctx context.Context, t *testing.T, node, server, catalogURL string, serve bool) *lspClient {
	t.Helper()
	cmd := exec.CommandContext(ctx, node, server, "--stdio")
	c := &lspClient{t: t, pending: map[int]chan lspMessage{}, diags: make(chan lspDiagnostics, 1024),
		settings: yamlSettings(catalogURL), serve: serve}
	cmd.Stderr = &lockedWriter{mu: &c.mu, w: &c.stderr}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.w = stdin
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.read(bufio.NewReader(stdout))
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
		if t.Failed() {
			c.mu.Lock()
			t.Logf("yaml-language-server stderr:\n%s", c.stderr.String())
			c.mu.Unlock()
		}
	})
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	c.call(ctx, "initialize", map[string]any{
		"processId": os.Getpid(),
		"rootUri":   (&url.URL{Scheme: "file", Path: root}).String(),
		"capabilities": map[string]any{
			"workspace":    map[string]any{"configuration": true},
			"textDocument": map[string]any{"publishDiagnostics": map[string]any{}},
		},
	})
	c.notify("initialized", map[string]any{})
	c.notify("yaml/registerContentRequest", nil)
	c.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"yaml": c.settings}})
	return c
}

// lockedWriter serializes writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (c *lspClient) send(m lspMessage) {
	m.JSONRPC = "2.0"
	body, err := json.Marshal(m)
	if err != nil {
		c.t.Error(err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		c.t.Errorf("write to yaml-language-server: %v", err)
	}
}

func (c *lspClient) notify(method string, params any) {
	raw, _ := json.Marshal(params)
	c.send(lspMessage{Method: method, Params: raw})
}

// call sends a request and waits for its answer.
func (c *lspClient) call(ctx context.Context, method string, params any) json.RawMessage {
	c.t.Helper()
	raw, _ := json.Marshal(params)
	ch := make(chan lspMessage, 1)
	c.mu.Lock()
	c.id++
	id := c.id
	c.pending[id] = ch
	c.mu.Unlock()
	c.send(lspMessage{ID: json.RawMessage(strconv.Itoa(id)), Method: method, Params: raw})
	select {
	case m := <-ch:
		if m.Error != nil {
			c.t.Fatalf("%s: %s", method, m.Error.Message)
		}
		return m.Result
	case <-ctx.Done():
		c.t.Fatalf("%s: no answer from yaml-language-server: %v", method, ctx.Err())
	}
	return nil
}

// read dispatches the server's messages until its stdout closes.
func (c *lspClient) read(r *bufio.Reader) {
	for {
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				length, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, max(length, 0))
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m lspMessage
		if err := json.Unmarshal(body, &m); err != nil {
			c.t.Errorf("yaml-language-server sent %q: %v", body, err)
			return
		}
		switch {
		case m.Method == "" && m.ID != nil:
			id, _ := strconv.Atoi(string(m.ID))
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case m.ID != nil:
			c.answer(m)
		case m.Method == "textDocument/publishDiagnostics":
			var d lspDiagnostics
			if err := json.Unmarshal(m.Params, &d); err == nil {
				c.diags <- d
			}
		}
	}
}

// answer answers a request of the server: schema content, settings.
func (c *lspClient) answer(m lspMessage) {
	reply := lspMessage{ID: m.ID}
	var result any
	switch m.Method {
	case "vscode/content":
		var u string
		if json.Unmarshal(m.Params, &u) != nil {
			var args []string // vscode-jsonrpc sends one parameter as [uri]
			if json.Unmarshal(m.Params, &args) == nil && len(args) == 1 {
				u = args[0]
			}
		}
		data, err := localSchemaText(u)
		if !c.serve {
			data, err = "", fmt.Errorf("offline: nothing is fetched")
		}
		if err != nil {
			c.mu.Lock()
			c.foreign = append(c.foreign, u)
			c.mu.Unlock()
			reply.Error = &struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}{-32603, err.Error()}
			c.send(reply)
			return
		}
		result = data
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		_ = json.Unmarshal(m.Params, &p)
		out := make([]any, len(p.Items))
		for i, it := range p.Items {
			if it.Section == "yaml" {
				out[i] = c.settings
			}
		}
		result = out
	}
	reply.Result, _ = json.Marshal(result)
	c.send(reply)
}

// localSchemaText is the published schema at u, read from schema/.
func localSchemaText(u string) (string, error) {
	name, ok := strings.CutPrefix(u, schemaBase)
	if !ok || strings.Contains(name, "/") {
		return "", fmt.Errorf("offline: %s is not one of the runner's schemas", u)
	}
	data, err := os.ReadFile(filepath.Join(schemaDir, name))
	return string(data), err
}

// waitDiagnostics collects the first diagnostics published for n
// documents: "line:col: message" by URI.
func (c *lspClient) waitDiagnostics(ctx context.Context, n int) map[string][]string {
	c.t.Helper()
	out := map[string][]string{}
	for len(out) < n {
		select {
		case d := <-c.diags:
			if _, seen := out[d.URI]; seen {
				continue
			}
			msgs := []string{}
			for _, x := range d.Diagnostics {
				msgs = append(msgs, fmt.Sprintf("%d:%d: %s", x.Range.Start.Line+1, x.Range.Start.Character+1, x.Message))
			}
			out[d.URI] = msgs
		case <-ctx.Done():
			c.t.Errorf("diagnostics for %d of %d documents: %v", len(out), n, ctx.Err())
			return out
		}
	}
	return out
}

func (c *lspClient) foreignURLs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.foreign...)
}
