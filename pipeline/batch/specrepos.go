package batch

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/seed43ef5acb/runner/pipeline/spec"
)

var repoKeys = []string{"url", "path", "ref", "inputs", "id"}

// idPattern is what an explicit repository id may contain: it names a
// directory under out/ and an artifact.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// repoSources decodes "repos" and "repos_file" and checks that together
// they name at least one repository.
func (d decoder) repoSources(root *yaml.Node, f map[string]*yaml.Node, s *Spec) {
	if n, ok := f["repos"]; ok {
		if n.Kind != yaml.SequenceNode {
			d.TypeError("repos", n, "a list", "")
		} else {
			for i, item := range n.Content {
				s.Repos = append(s.Repos, d.repo(spec.Deref(item), fmt.Sprintf("repos[%d]", i)))
			}
		}
	}
	if n, ok := f["repos_file"]; ok {
		if s.ReposFile = d.Str("repos_file", n); s.ReposFile != "" {
			s.Repos = append(s.Repos, d.reposFile(n, resolve(s.Dir, s.ReposFile))...)
		}
	}
	_, hasRepos := f["repos"]
	_, hasFile := f["repos_file"]
	if !hasRepos && !hasFile && root.Kind == yaml.MappingNode {
		d.hintf(root, `add "repos: [...]" or "repos_file: ..."`, "the batch spec: missing required key \"repos\" or \"repos_file\"")
	}
}

func (d decoder) repo(n *yaml.Node, what string) RepoSpec {
	r := RepoSpec{Pos: d.pos(n), What: what}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if strings.TrimSpace(n.Value) == "" {
			d.hintf(n, "give a URL or a path, or remove the entry", "%s: empty repository", what)
		}
		r.URL, r.Path = splitSource(n.Value)
		return r
	}
	f := d.Fields(what, n, repoKeys...)
	u, hasURL := f["url"]
	p, hasPath := f["path"]
	switch {
	case hasURL && hasPath:
		d.errorf(p, "%s: give either url or path, not both", what)
	case !hasURL && !hasPath && f != nil:
		d.errorf(n, "%s: missing required key \"url\" or \"path\"", what)
	}
	if hasURL {
		r.URL = d.NonEmpty(what+".url", u)
	}
	if hasPath {
		r.Path = d.NonEmpty(what+".path", p)
	}
	if v, ok := f["ref"]; ok {
		r.Ref = d.Str(what+".ref", v)
	}
	if v, ok := f["inputs"]; ok {
		r.Inputs = d.StringMap(what+".inputs", v)
		r.InputsPos, r.InputPos = d.pos(v), map[string]InputPos{}
		if v.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(v.Content); i += 2 {
				r.InputPos[v.Content[i].Value] = InputPos{Key: d.pos(v.Content[i]), Value: d.pos(v.Content[i+1])}
			}
		}
	}
	if v, ok := f["id"]; ok {
		if r.ID = d.Str(what+".id", v); r.ID != "" && !idPattern.MatchString(r.ID) {
			d.hintf(v, "use letters, digits, '.', '_' and '-'", "%s.id: invalid id %q", what, r.ID)
		}
	}
	return r
}

// reposFile reads one repository per line: "URL-or-path [ref]"; blank
// lines and lines starting with '#' are ignored.
func (d decoder) reposFile(n *yaml.Node, path string) []RepoSpec {
	data, err := os.ReadFile(path)
	if err != nil {
		d.hintf(n, "the path is relative to the batch file", "repos_file: cannot read %q: %v", n.Value, err)
		return nil
	}
	var out []RepoSpec
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		col := strings.Index(sc.Text(), text) + 1
		fields := strings.Fields(text)
		if len(fields) > 2 {
			d.Add(&SpecError{File: path, Line: line, Col: col,
				Msg: "repos_file: expected \"URL-or-path [ref]\", got " + fmt.Sprint(len(fields)) + " fields"})
			continue
		}
		r := RepoSpec{Pos: fmt.Sprintf("%s:%d:%d", path, line, col), What: fmt.Sprintf("repos_file line %d", line)}
		r.URL, r.Path = splitSource(fields[0])
		if len(fields) == 2 {
			r.Ref = fields[1]
		}
		out = append(out, r)
	}
	return out
}

// splitSource tells a URL ("scheme://…" or scp-like "user@host:path") from a
// local path.
func splitSource(s string) (url, path string) {
	if isURL(s) {
		return s, ""
	}
	return "", s
}

func isURL(s string) bool {
	if strings.Contains(s, "://") {
		return true
	}
	at, colon := strings.Index(s, "@"), strings.Index(s, ":")
	return at > 0 && colon > at && !strings.Contains(s[:at], "/")
}

// inlineSource cuts the inline task n (the value of the key "task" of
// root) out of the batch file src: the lines from n's first to the one
// before root's next key (or the end of the file), n's first line blanked
// up to n's column, every other line empty. Decoded as a task spec it
// reports its problems at the batch file's lines and columns. nil when it
// cannot be cut out: the next key is on n's line (a flow mapping), or the
// cut does not parse as a mapping on its own (an alias to an anchor
// outside it).
func inlineSource(src []byte, root, n *yaml.Node) []byte {
	lines := strings.SplitAfter(string(src), "\n")
	end := len(lines) + 1 // 1-based, exclusive
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i+1] == n && i+2 < len(root.Content) {
			end = root.Content[i+2].Line
		}
	}
	if n.Line < 1 || n.Line >= end || n.Line > len(lines) || n.Column < 1 {
		return nil
	}
	var b strings.Builder
	for i, line := range lines {
		switch l := i + 1; {
		case l == n.Line:
			r := []rune(line)
			if n.Column-1 > len(r) {
				return nil
			}
			b.WriteString(strings.Repeat(" ", n.Column-1) + string(r[n.Column-1:]))
		case l > n.Line && l < end:
			b.WriteString(line)
		case strings.HasSuffix(line, "\n"):
			b.WriteString("\n")
		}
	}
	var doc yaml.Node
	if yaml.Unmarshal([]byte(b.String()), &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	return []byte(b.String())
}
