package batch

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

// SpecVersion is the only batch spec version this runner reads.
const SpecVersion = 1

// Defaults applied when a batch spec leaves a key out.
const (
	DefaultDepth       = 1
	DefaultRetries     = 2
	DefaultConcurrency = 1
)

// Spec is a batch spec (v1) as loaded by LoadSpec. YAML keys are the
// snake_case names in the field comments. Relative paths in the spec are
// relative to the batch file's directory (Dir).
type Spec struct {
	Path        string // the file loaded (as given)
	Dir         string // absolute directory of the batch file
	Version     int    // "version" (required, 1)
	Name        string // "name" (required)
	Description string // "description"
	Task        TaskRef
	Repos       []RepoSpec // "repos" plus the entries of "repos_file", in order
	ReposFile   string     // "repos_file" as written
	Concurrency int        // "concurrency" (≥1; default 1)
	Clone       CloneSpec  // "clone"
	Limits      Limits     // "limits"
	Retries     int        // "retries": extra attempts after an infrastructure failure (default 2)

	pos map[string]string // where values are ("file:line:col"), by key path: "task", "limits.max_cost_usd"
}

// Position is where the value at a key path of the batch spec is
// ("file:line:col"): "task", "limits.timeout", "limits.max_cost_usd",
// "limits.total_max_cost_usd"; "" when the file does not have it.
func (s *Spec) Position(key string) string { return s.pos[key] }

// TaskRef is "task": a path to a task spec file or an inline task mapping.
type TaskRef struct {
	Path   string // absolute path of the task spec file; "" when inline
	Name   string // the task spec file for messages: the path as written, joined to the batch file's directory as given
	Inline []byte // the inline task spec re-encoded as YAML; nil when a path
	// Source is the inline task as written: the batch file's lines that
	// hold it, the others blank, so that its problems are reported at
	// the batch file's lines and columns; nil when the task is a path or
	// cannot be cut out of the file (an alias, a flow mapping beside
	// other keys): Inline is checked then.
	Source []byte
}

// RepoSpec is one entry of "repos" or one line of "repos_file". Exactly one
// of URL and Path is set.
type RepoSpec struct {
	URL    string            // "url": any go-git URL (https, ssh, file://)
	Path   string            // "path": a local repository, relative to the batch file
	Ref    string            // "ref": branch, tag or commit; "" = the default branch
	Inputs map[string]string // "inputs": task inputs for this repository
	ID     string            // "id": overrides the derived repository id
	Pos    string            // where it was declared ("file:line:col")
	// What names the entry in messages: "repos[1]", or "repos_file line 3".
	What string
	// InputsPos is where its "inputs" mapping is ("file:line:col"; "" when
	// it has none), InputPos where each input's key and value are.
	InputsPos string
	InputPos  map[string]InputPos
}

// InputPos is where one input of a repository entry is: its key and its
// value ("file:line:col").
type InputPos struct{ Key, Value string }

// CloneSpec is "clone".
type CloneSpec struct {
	Depth int // "depth": history depth; 0 = full history (default 1)
}

// Limits is "limits"; zero means none.
type Limits struct {
	Timeout         time.Duration // "timeout": per repository, e.g. "20m"
	MaxCostUSD      float64       // "max_cost_usd": per repository
	TotalMaxCostUSD float64       // "total_max_cost_usd": for the whole batch; each of N shards gets 1/N
}

// The keys the decoder accepts, by mapping; batch.schema.json lists the same.
var (
	limitKeys = []string{"timeout", "max_cost_usd", "total_max_cost_usd"}
	cloneKeys = []string{"depth"}
)

var topKeys = []string{"version", "name", "description", "task", "repos", "repos_file",
	"concurrency", "clone", "limits", "retries"}

// LoadSpec reads and strictly validates a batch spec. Every problem is
// reported as file:line:col in a SpecErrors matching ErrInvalidSpec; I/O
// errors are returned wrapped.
func LoadSpec(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read batch spec: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("batch spec path: %w", err)
	}
	return LoadSpecBytes(path, filepath.Dir(abs), data)
}

// LoadSpecBytes validates a batch spec read elsewhere (stdin) as LoadSpec
// does; name labels its errors and dir is where its paths are relative to.
func LoadSpecBytes(name, dir string, data []byte) (*Spec, error) {
	s, err := LoadSpecPartial(name, dir, data)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// LoadSpecPartial is LoadSpecBytes that also returns what decoded of a
// spec with errors, so that `runner validate` checks its repositories and
// task in the same pass. The spec is nil only when the file is no YAML
// document; a key in error holds its zero value.
func LoadSpecPartial(name, dir string, data []byte) (*Spec, error) {
	s := &Spec{Path: name, Dir: dir, pos: map[string]string{}}
	d := decoder{Decoder: spec.NewDecoder(name, "batch", data), src: data}
	if !d.decodeSpec(s) {
		return nil, d.Err()
	}
	return s, d.Err()
}

// LooksLikeBatch reports whether data is a YAML mapping with a "repos" or
// "repos_file" key, i.e. a batch spec rather than a task spec.
func LooksLikeBatch(data []byte) bool {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return false
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i].Value; k == "repos" || k == "repos_file" {
			return true
		}
	}
	return false
}

// decodeSpec decodes data into s; false when it is no YAML document.
func (d decoder) decodeSpec(s *Spec) bool {
	root := d.Document()
	if root == nil {
		return false
	}
	f := d.Fields("", root, topKeys...)
	d.Require("", root, f, "version", "name", "task")
	s.Concurrency, s.Clone.Depth, s.Retries = DefaultConcurrency, DefaultDepth, DefaultRetries
	if n, ok := f["version"]; ok {
		if s.Version = int(d.Integer("version", n, 0)); s.Version != SpecVersion && d.Err() == nil {
			d.errorf(n, "version: unsupported version %d (this runner reads version %d)", s.Version, SpecVersion)
		}
	}
	if n, ok := f["name"]; ok {
		s.Name = d.Str("name", n)
	}
	if n, ok := f["description"]; ok {
		s.Description = d.Str("description", n)
	}
	if n, ok := f["task"]; ok {
		s.pos["task"] = d.pos(n)
		s.Task = d.task(n, s.Dir)
		if s.Task.Inline != nil {
			s.Task.Source = inlineSource(d.src, root, n)
		}
	}
	if n, ok := f["concurrency"]; ok {
		s.Concurrency = int(d.Integer("concurrency", n, 1))
	}
	if n, ok := f["retries"]; ok {
		s.Retries = int(d.Integer("retries", n, 0))
	}
	if n, ok := f["clone"]; ok {
		if v, ok := d.Fields("clone", n, cloneKeys...)["depth"]; ok {
			s.Clone.Depth = int(d.Integer("clone.depth", v, 0))
		}
	}
	if n, ok := f["limits"]; ok {
		s.Limits = d.limits(n, s.pos)
	}
	d.repoSources(root, f, s)
	return true
}

func (d decoder) task(n *yaml.Node, dir string) TaskRef {
	switch {
	case n.Kind == yaml.MappingNode:
		data, err := yaml.Marshal(n)
		if err != nil {
			d.errorf(n, "task: cannot re-encode the inline task: %v", err)
		}
		return TaskRef{Inline: data}
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Value != "":
		p := resolve(dir, n.Value)
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			d.hintf(n, "the path is relative to the batch file", "task: task spec file %q not found", n.Value)
		}
		name := n.Value
		if !filepath.IsAbs(name) {
			name = filepath.Join(filepath.Dir(d.File()), name)
		}
		return TaskRef{Path: p, Name: name}
	}
	d.TypeError("task", n, "a task spec path or an inline task mapping", "")
	return TaskRef{}
}

func (d decoder) limits(n *yaml.Node, pos map[string]string) Limits {
	var l Limits
	f := d.Fields("limits", n, limitKeys...)
	for k, v := range f {
		pos["limits."+k] = d.pos(v)
	}
	if v, ok := f["timeout"]; ok {
		l.Timeout = d.Duration("limits.timeout", v)
	}
	if v, ok := f["max_cost_usd"]; ok {
		l.MaxCostUSD = d.Number("limits.max_cost_usd", v)
	}
	if v, ok := f["total_max_cost_usd"]; ok {
		l.TotalMaxCostUSD = d.Number("limits.total_max_cost_usd", v)
	}
	return l
}

// resolve makes p absolute relative to dir (file:// and other URLs are
// not paths and are left alone by callers).
func resolve(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
