package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/pipeline/batch"
)

// schemaBase is where the schemas are published: their $id URLs start
// with it, and schema/ holds the files it serves.
const schemaBase = "https://raw.githubusercontent.com/seed43ef5acb/runner/main/schema/"

// schemaDir is the repository's schema/ directory, seen from this package.
const schemaDir = "../../schema"

// inexpressible are the corpus probes `runner validate` refuses and the
// JSON Schema accepts, by file, with the check no schema can state. A
// probe listed here that the schema refuses fails the test: drop it.
var inexpressible = map[string]string{
	"task/bad/timeout-below-a-nanosecond.yaml":    "a duration is a sum rounded to whole nanoseconds (time.ParseDuration): 0.5ns is zero, which no pattern over the text can tell from 1.5ns",
	"task/bad/timeout-overflow.yaml":              "a duration is at most about 292 years, a bound on the sum of its parts that no pattern over the text states",
	"task/bad/input-enum-duplicate-text.yaml":     "input values are text, so 1 and \"1\" are the same value; uniqueItems compares JSON values, and 1 is not \"1\"",
	"task/bad/input-default-not-in-enum.yaml":     "an input's default must be one of its own enum values: JSON Schema cannot compare one value of the document with another",
	"task/bad/edit-bad-glob.yaml":                 "glob syntax (doublestar.ValidatePattern) has nested braces, which are no regular language",
	"task/bad/mcp-pattern-undeclared-server.yaml": "a permissions.mcp pattern must name a key of mcp.servers: a reference between two parts of the document",
	"task/bad/prompt-undeclared-input.yaml":       "templates are parsed (text/template) and may use only the inputs the spec declares",
	"task/bad/prompt-template-syntax.yaml":        "templates are parsed (text/template)",
	"task/bad/check-names-duplicate.yaml":         "check names are unique: uniqueItems compares whole items, not one key of them",
	"task/bad/output-schema-invalid.yaml":         "output.schema must compile as a JSON Schema with no remote $ref, within size bounds; checking it against the metaschema would make editors fetch that",
	"task/bad/writable-root-through-a-name.yaml":  "a writable path that cleans to / through a name and .. (/tmp/..): path.Clean counts segments, which no pattern does",
	"task/bad/mcp-url-bad-port.yaml":              "an MCP server's URL is parsed (net/url: ports, host characters) and its host looked up as an IP address; the schema states the scheme, localhost, 127.0.0.0/8 and [::1]",
	"task/bad/network-allow-bad-port.yaml":        "allow-list entries are parsed as host names, ports and IP addresses (netproxy.ParseEntry); the schema refuses only schemes, paths, users and spaces",
	"task/bad/max-cost-unpriced-model.yaml":       "a cost limit needs the model's price, looked up in the runner's catalogue",
	"task/bad/merge-key.yaml":                     "the runner refuses merge keys (<<), but YAML loaders resolve them before a schema sees the document",
	"task/bad/two-documents.yaml":                 "a file holds one spec; editors and loaders validate each YAML document on its own",
	"batch/bad/repo-input-undeclared.yaml":        "a repository's inputs must be inputs the task declares: the task is another file",
	"batch/bad/task-file-missing.yaml":            "the task file must exist",
	"batch/bad/repos-file-missing.yaml":           "the repos_file must exist",
	"batch/bad/repo-path-missing.yaml":            "a local repository must exist and hold a git repository",
	"batch/bad/cost-unpriced-model.yaml":          "a cost limit needs the model's price, looked up in the runner's catalogue",
}

// corpusSpec is one spec of the corpus: its name ("task/bad/x.yaml"),
// the file it was written to, and whether `runner validate` should accept it.
type corpusSpec struct {
	name, path string
	ok         bool
}

// loadCorpus writes testdata/speccorpus/KIND.txtar into a new directory and
// returns its specs: files under ok/ and bad/.
func loadCorpus(t *testing.T, kind string) []corpusSpec {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "speccorpus", kind+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var specs []corpusSpec
	for _, f := range ar.Files {
		path := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		verdict, _, _ := strings.Cut(f.Name, "/")
		if verdict != "ok" && verdict != "bad" {
			// Beside the specs: a batch's task and repos file.
			continue
		}
		// A batch spec's paths are relative to its file: put it beside them.
		if kind == "batch" {
			flat := filepath.Join(dir, verdict+"-"+filepath.Base(f.Name))
			if err := os.WriteFile(flat, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			path = flat
		}
		specs = append(specs, corpusSpec{name: kind + "/" + f.Name, path: path, ok: verdict == "ok"})
	}
	return specs
}

// exampleSpecs are the task and batch specs under examples/ (the files
// with a yaml-language-server modeline), each valid. A batch example's
// local repositories are made by its script; here a copy of its directory
// gets them as empty git repositories with one commit.
func exampleSpecs(t *testing.T) []corpusSpec {
	t.Helper()
	var specs []corpusSpec
	err := filepath.WalkDir("../../examples", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(data, []byte("# yaml-language-server: $schema=")) {
			return nil
		}
		kind := "task"
		if batch.LooksLikeBatch(data) {
			kind, path = "batch", batchWithRepos(t, path)
		}
		specs = append(specs, corpusSpec{name: kind + "/" + path, path: path, ok: true})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return specs
}

// batchWithRepos copies a batch example's directory and makes the local
// repositories it names; it returns the copy's batch file.
func batchWithRepos(t *testing.T, path string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Dir(path))); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, filepath.Base(path))
	s, err := batch.LoadSpec(copied)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, r := range s.Repos {
		if r.Path == "" {
			continue
		}
		repo := filepath.Join(dir, r.Path)
		gitRun(t, "", "init", "-q", "-b", "main", repo)
		gitRun(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init")
	}
	return copied
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// localSchemas loads schemaBase URLs from schema/, as an editor or a
// validator given the files does: nothing goes to the network.
type localSchemas struct{}

func (localSchemas) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, schemaBase)
	if !ok || strings.Contains(name, "/") {
		return nil, fmt.Errorf("%s is not one of the runner's schemas (%s*)", url, schemaBase)
	}
	f, err := os.Open(filepath.Join(schemaDir, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return jsonschema.UnmarshalJSON(f)
}

// compileSchemas compiles the task and batch schemas from schema/ by
// their $id; the batch schema's relative $ref to the task schema is
// resolved by the same local loader.
func compileSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.UseLoader(localSchemas{})
	out := map[string]*jsonschema.Schema{}
	for kind, file := range map[string]string{"task": "task.schema.json", "batch": "batch.schema.json"} {
		sch, err := c.Compile(schemaBase + file)
		if err != nil {
			t.Fatalf("%s does not compile: %v", file, err)
		}
		out[kind] = sch
	}
	return out
}

// yamlAsJSON is a YAML document as the JSON value a schema validates in
// an editor: YAML 1.2, where 2024-01-01 is a string, not a timestamp.
func yamlAsJSON(t *testing.T, data []byte) any {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var untime func(n *yaml.Node)
	untime = func(n *yaml.Node) {
		if n.ShortTag() == "!!timestamp" {
			n.Tag = "!!str"
		}
		for _, c := range n.Content {
			untime(c)
		}
	}
	untime(&doc)
	var v any
	if err := doc.Decode(&v); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSchemaAgreesWithValidate feeds every corpus spec and every example
// to `runner validate`'s loader and to a standard JSON Schema validator
// and requires the same verdict, but for the inexpressible checks.
func TestSchemaAgreesWithValidate(t *testing.T) {
	schemas := compileSchemas(t)
	specs := append(loadCorpus(t, "task"), loadCorpus(t, "batch")...)
	specs = append(specs, exampleSpecs(t)...)
	used := map[string]bool{}
	for _, s := range specs {
		t.Run(s.name, func(t *testing.T) {
			data, err := os.ReadFile(s.path)
			if err != nil {
				t.Fatal(err)
			}
			streams := Streams{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}
			_, _, verr := loadSpec(context.Background(), streams, s.path)
			if (verr == nil) != s.ok {
				t.Fatalf("runner validate: want ok=%v, got error %v", s.ok, verr)
			}
			kind, _, _ := strings.Cut(s.name, "/")
			serr := schemas[kind].Validate(yamlAsJSON(t, data))
			reason, listed := inexpressible[s.name]
			used[s.name] = listed
			switch {
			case listed && serr != nil:
				t.Errorf("listed as inexpressible (%s), but the schema refuses it too: drop it from the list\n%v", reason, serr)
			case listed:
			case verr == nil && serr != nil:
				t.Errorf("runner validate accepts it, the schema refuses it:\n%v", serr)
			case verr != nil && serr == nil:
				t.Errorf("runner validate refuses it, the schema accepts it:\n%v", verr)
			}
		})
	}
	for name := range inexpressible {
		if !used[name] {
			t.Errorf("inexpressible lists %s, which is no corpus spec", name)
		}
	}
	ok := slices.IndexFunc(specs, func(s corpusSpec) bool { return !s.ok })
	if ok < 0 || len(specs) < 100 {
		t.Fatalf("the corpus has %d specs, too few to say anything", len(specs))
	}
}

// TestSchemaURLs: every schema in schema/ has its published URL as $id,
// schema/catalog.json names the task and batch schemas by those URLs, and
// every example's modeline names one, so that it works in a copy.
func TestSchemaURLs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.schema.json"))
	if err != nil || len(files) < 4 {
		t.Fatalf("schemas in %s: %v %v", schemaDir, files, err)
	}
	ids := map[string]bool{}
	for _, f := range files {
		var s struct {
			ID string `json:"$id"`
		}
		data, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(data, &s)
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := schemaBase + filepath.Base(f); s.ID != want {
			t.Errorf("%s: $id is %q, want %q (where the file is published)", f, s.ID, want)
		}
		ids[s.ID] = true
	}
	var catalog struct {
		Schemas []struct {
			Name      string   `json:"name"`
			URL       string   `json:"url"`
			FileMatch []string `json:"fileMatch"`
		} `json:"schemas"`
	}
	data, err := os.ReadFile(filepath.Join(schemaDir, "catalog.json"))
	if err == nil {
		err = json.Unmarshal(data, &catalog)
	}
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, s := range catalog.Schemas {
		if !ids[s.URL] || len(s.FileMatch) == 0 || s.Name == "" {
			t.Errorf("catalog entry %q: url %q must be a schema's $id, with a name and fileMatch patterns", s.Name, s.URL)
		}
		named = append(named, strings.TrimPrefix(s.URL, schemaBase))
	}
	slices.Sort(named)
	if !slices.Equal(named, []string{"batch.schema.json", "task.schema.json"}) {
		t.Errorf("the catalog names %v, want the batch and task schemas", named)
	}
	for _, s := range exampleSpecs(t) {
		data, err := os.ReadFile(s.path)
		if err != nil {
			t.Fatal(err)
		}
		kind, _, _ := strings.Cut(s.name, "/")
		want := "# yaml-language-server: $schema=" + schemaBase + kind + ".schema.json\n"
		if !bytes.HasPrefix(data, []byte(want)) {
			t.Errorf("%s: the first line must be %q", s.path, want)
		}
	}
}
