package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"gopkg.in/yaml.v3"
)

// TemplateData is what the prompt and the pull request templates see:
// .Inputs (resolved inputs), and in GitHub Actions .Event (the event
// payload) and .GitHub (repository, sha, ref, actor, run URL, number, …).
// A key that is missing from any of them is an error, not an empty string.
type TemplateData struct {
	Inputs map[string]string
	Event  map[string]any
	GitHub map[string]any
}

// templateRoots are the top-level fields of TemplateData, sorted.
func templateRoots() []string { return []string{"Event", "GitHub", "Inputs"} }

// newTemplate parses text with missing keys as errors.
func newTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").Parse(text)
}

var parseErrLine = regexp.MustCompile(`^template: [^:]*:(\d+): (.*)$`)

// checkTemplate parses the template in n and reports syntax errors, unknown
// top-level fields and inputs that are not declared.
func (d *Decoder) checkTemplate(path string, n *yaml.Node, inputs map[string]Input) {
	text := n.Value
	t, err := newTemplate(path, text)
	if err != nil {
		msg, off := err.Error(), 0
		if m := parseErrLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			msg, off = m[2], lineOffset(text, line)
		}
		d.ErrorAtPos(d.textPos(n, off), "see https://pkg.go.dev/text/template", "%s: template: %s", path, msg)
		return
	}
	declared := make([]string, 0, len(inputs))
	for name := range inputs {
		declared = append(declared, name)
	}
	slices.Sort(declared)
	for _, ref := range templateRefs(t) {
		p := d.textPos(n, refOffset(text, ref))
		switch {
		case ref.github != "" || ref.event != nil:
			if msg, hint := checkGitHubRef(ref); msg != "" {
				d.ErrorAtPos(p, hint, "%s: %s", path, msg)
			}
		case ref.root != "":
			d.ErrorAtPos(p, unknownFieldHint(ref.root), "%s: unknown template field .%s", path, ref.root)
		case !slices.Contains(declared, ref.input):
			hint := fmt.Sprintf("declare it under inputs:, e.g. %q", ref.input+": {description: ...}")
			if s := suggest(ref.input, declared); s != "" {
				hint = fmt.Sprintf("did you mean .Inputs.%s?", s)
			}
			d.ErrorAtPos(p, hint, "%s: template uses input %q, which is not declared", path, ref.input)
		}
	}
}

func unknownFieldHint(root string) string {
	if s := suggest(root, templateRoots()); s != "" {
		return fmt.Sprintf("did you mean .%s?", s)
	}
	return "templates see .Inputs, .Event and .GitHub"
}

// refOffset finds where a reference's name starts in text: the parser's
// positions point at some field of the chain, not always at its start, so
// search back from there for the name.
func refOffset(text string, ref templateRef) int {
	needle, skip := "."+ref.root, 0
	switch {
	case ref.github != "":
		needle = "GitHub." + ref.github
	case ref.event != nil:
		needle = "Event." + ref.event[0]
	case ref.root == "":
		needle, skip = "Inputs."+ref.input, len("Inputs.")
	}
	end := min(len(text), int(ref.pos)+len(needle)+1)
	if i := strings.LastIndex(text[:end], needle); i >= 0 {
		return i + skip
	}
	return int(ref.pos)
}

// templateRef is a reference found in a template: an unknown top-level
// field (root), an input name (input), a .GitHub field (github) or a
// .Event key path (event), at a byte offset of the text.
type templateRef struct {
	root, input string
	github      string
	event       []string
	pos         parse.Pos
}

// templateRefs walks every parse tree of t for .X.Y fields and $.X.Y
// variables where the dot is the template's data, and for
// `index .Inputs "name"`.
func templateRefs(t *template.Template) []templateRef {
	var refs []templateRef
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Tree.Root != nil {
			walkTemplate(tt.Tree.Root, true, &refs)
		}
	}
	slices.SortFunc(refs, func(a, b templateRef) int { return int(a.pos - b.pos) })
	return refs
}

func walkTemplate(node parse.Node, dotIsRoot bool, refs *[]templateRef) {
	switch n := node.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkTemplate(c, dotIsRoot, refs)
		}
	case *parse.ActionNode:
		walkTemplate(n.Pipe, dotIsRoot, refs)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, dotIsRoot, dotIsRoot, refs)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, dotIsRoot, false, refs)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, dotIsRoot, false, refs)
	case *parse.TemplateNode:
		walkTemplate(n.Pipe, dotIsRoot, refs)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walkCommand(c, dotIsRoot, refs)
		}
	case *parse.ChainNode:
		walkTemplate(n.Node, dotIsRoot, refs)
	case *parse.FieldNode:
		if dotIsRoot {
			addRef(n.Ident, n.Pos, refs)
		}
	case *parse.VariableNode:
		if len(n.Ident) > 1 && n.Ident[0] == "$" {
			addRef(n.Ident[1:], n.Pos, refs)
		}
	}
}

// walkBranch walks if/range/with: the pipeline and else branch see the
// outer dot, the body sees bodyDot.
func walkBranch(n *parse.BranchNode, outerDot, bodyDot bool, refs *[]templateRef) {
	walkTemplate(n.Pipe, outerDot, refs)
	walkTemplate(n.List, bodyDot, refs)
	if n.ElseList != nil {
		walkTemplate(n.ElseList, outerDot, refs)
	}
}

func walkCommand(c *parse.CommandNode, dotIsRoot bool, refs *[]templateRef) {
	for _, a := range c.Args {
		walkTemplate(a, dotIsRoot, refs)
	}
	if len(c.Args) < 3 {
		return
	}
	if id, ok := c.Args[0].(*parse.IdentifierNode); !ok || id.Ident != "index" {
		return
	}
	str, ok := c.Args[2].(*parse.StringNode)
	if !ok {
		return
	}
	switch a := c.Args[1].(type) {
	case *parse.FieldNode:
		if dotIsRoot && slices.Equal(a.Ident, []string{"Inputs"}) {
			*refs = append(*refs, templateRef{input: str.Text, pos: str.Pos})
		}
	case *parse.VariableNode:
		if slices.Equal(a.Ident, []string{"$", "Inputs"}) {
			*refs = append(*refs, templateRef{input: str.Text, pos: str.Pos})
		}
	}
}

func addRef(ident []string, pos parse.Pos, refs *[]templateRef) {
	switch {
	case !slices.Contains(templateRoots(), ident[0]):
		*refs = append(*refs, templateRef{root: ident[0], pos: pos})
	case ident[0] == "Inputs" && len(ident) > 1:
		*refs = append(*refs, templateRef{input: ident[1], pos: pos})
	case ident[0] == "GitHub" && len(ident) > 1:
		*refs = append(*refs, templateRef{github: ident[1], pos: pos})
	case ident[0] == "Event" && len(ident) > 1:
		*refs = append(*refs, templateRef{event: ident[1:], pos: pos})
	}
}

// lineOffset returns the byte offset of the 1-based line in text.
func lineOffset(text string, line int) int {
	off := 0
	for i := 1; i < line; i++ {
		j := strings.IndexByte(text[off:], '\n')
		if j < 0 {
			return off
		}
		off += j + 1
	}
	return off
}

// textPos maps a byte offset in a scalar's value to a position in the file.
// It is exact for literal block scalars (|) and for single-line plain or
// quoted scalars without escapes; otherwise it is the scalar's position.
func (d *Decoder) textPos(n *yaml.Node, off int) Pos {
	text := n.Value
	off = min(max(off, 0), len(text))
	line := strings.Count(text[:off], "\n")
	col := off - (strings.LastIndexByte(text[:off], '\n') + 1)
	switch {
	case n.Style&yaml.LiteralStyle != 0:
		indent, ok := d.blockIndent(n.Line)
		if ok {
			return Pos{Line: n.Line + 1 + line, Col: indent + col + 1}
		}
	case strings.Contains(text, "\n"):
	case n.Style == 0 || n.Style == yaml.TaggedStyle:
		return Pos{Line: n.Line, Col: n.Column + col}
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 && d.rawAt(n.Line, n.Column+1, text):
		return Pos{Line: n.Line, Col: n.Column + 1 + col}
	}
	return posOf(n)
}

// srcLine returns the 1-based line of the source, without its newline.
func (d *Decoder) srcLine(line int) (string, bool) {
	if d.lines == nil {
		d.lines = strings.Split(string(d.src), "\n")
	}
	if line < 1 || line > len(d.lines) {
		return "", false
	}
	return strings.TrimSuffix(d.lines[line-1], "\r"), true
}

// blockIndent finds the indentation of a block scalar whose indicator is on
// line: that of its first non-blank content line.
func (d *Decoder) blockIndent(line int) (int, bool) {
	for l := line + 1; ; l++ {
		s, ok := d.srcLine(l)
		if !ok {
			return 0, false
		}
		if strings.TrimSpace(s) != "" {
			return len(s) - len(strings.TrimLeft(s, " ")), true
		}
	}
}

// rawAt reports whether text appears verbatim in the source at line:col.
func (d *Decoder) rawAt(line, col int, text string) bool {
	s, ok := d.srcLine(line)
	return ok && col >= 1 && col-1 <= len(s) && strings.HasPrefix(s[col-1:], text)
}
