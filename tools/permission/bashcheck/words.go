package bashcheck

import (
	"bytes"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/seed43ef5acb/runner/tools/permission"
)

// word is one shell word after quote removal. Parts known only at run time
// (expansions, substitutions, globs, brace expansions, a leading tilde)
// become a single permission.Hole rune in runes.
type word struct {
	runes []rune // literal runes with holes
	text  string // for display: literal text, dynamic parts as written
	// split is set when an unquoted dynamic part may expand to several
	// words (or none).
	split bool
	// decoded is runes with every $'…' string decoded, nil when the word
	// has none: what the word names as a path ($'/etc/passwd').
	decoded []rune
	// unknown is the first expansion whose value is text only known at
	// run time ($F, $(cmd), xargs' input), as written; "" when every
	// hole is a glob or a number.
	unknown string
	// opaque is set when a hole is not a glob wildcard (~, an
	// expansion, an extended glob): the word cannot be globbed here.
	opaque bool
	// via says how the word came about when bash made it from another
	// (a brace expansion, a variable's value), for explanations.
	via string
}

// pathRunes are the runes a path check looks at.
func (w word) pathRunes() []rune {
	if w.decoded != nil {
		return w.decoded
	}
	return w.runes
}

// static reports whether the word has no dynamic part.
func (w word) static() bool {
	for _, r := range w.runes {
		if r == permission.Hole {
			return false
		}
	}
	return true
}

// lit is the word's literal value; meaningful only when static.
func (w word) lit() string { return string(w.runes) }

// holeWord is a word that is entirely unknown.
func holeWord(text string) word {
	return word{runes: []rune{permission.Hole}, text: text, split: true, unknown: text}
}

// litWord is a fully known word.
func litWord(s string) word { return word{runes: []rune(s), text: s} }

// wordBuilder accumulates a word's parts.
type wordBuilder struct {
	runes   []rune
	text    strings.Builder
	split   bool
	dec     []rune // runes with $'…' decoded
	decoded bool   // a $'…' was decoded
	unknown string // see word.unknown
	via     string // see word.via
	opaque  bool   // see word.opaque
}

func (b *wordBuilder) lit(s string) {
	b.runes = append(b.runes, []rune(s)...)
	b.dec = append(b.dec, []rune(s)...)
	b.text.WriteString(s)
}

// dynamicPart adds an expansion, noting whether its value is unknown.
func (b *wordBuilder) dynamicPart(part syntax.WordPart, unquoted bool) {
	if b.unknown == "" {
		b.unknown = unknownPart(part)
	}
	b.opaque = true
	b.dynamic(nodeText(part), unquoted)
}

func (b *wordBuilder) dynamic(src string, unquoted bool) {
	b.runes = appendHole(b.runes)
	b.dec = appendHole(b.dec)
	b.text.WriteString(src)
	b.split = b.split || unquoted
}

// ansiC adds a $'…' string: unknown to command rules (they see what is
// written), decoded for path checks.
func (b *wordBuilder) ansiC(p *syntax.SglQuoted) {
	s, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{p}})
	if err != nil {
		b.opaque = true
		b.dynamic(nodeText(p), false)
		return
	}
	b.runes = appendHole(b.runes)
	b.dec = append(b.dec, []rune(s)...)
	b.decoded = true
	b.text.WriteString(nodeText(p))
}

func appendHole(rs []rune) []rune {
	if n := len(rs); n == 0 || rs[n-1] != permission.Hole {
		return append(rs, permission.Hole)
	}
	return rs
}

func (b *wordBuilder) word() word {
	w := word{runes: b.runes, text: b.text.String(), split: b.split, unknown: b.unknown, via: b.via, opaque: b.opaque}
	if b.decoded {
		w.decoded = b.dec
	}
	return w
}

// convertWord removes quotes from w and marks its dynamic parts.
func convertWord(w *syntax.Word) word {
	var b wordBuilder
	for i, part := range w.Parts {
		convertPart(&b, part, i == 0)
	}
	return b.word()
}

func convertPart(b *wordBuilder, part syntax.WordPart, first bool) {
	switch p := part.(type) {
	case *syntax.Lit:
		unquotedLit(b, p.Value, first)
	case *syntax.SglQuoted:
		if p.Dollar { // $'...' escapes: unknown to rules, decoded for paths
			b.ansiC(p)
			return
		}
		b.lit(p.Value)
	case *syntax.DblQuoted:
		for _, inner := range p.Parts {
			if l, ok := inner.(*syntax.Lit); ok {
				b.lit(unescapeDouble(l.Value))
				continue
			}
			b.dynamicPart(inner, false)
		}
	default: // ParamExp, CmdSubst, ArithmExp, ProcSubst, ExtGlob, BraceExp
		b.dynamicPart(part, true)
	}
}

// unquotedLit adds an unquoted literal: backslashes escape the next
// character; unescaped glob characters and a leading tilde make the word
// dynamic (they expand at run time). Brace expansions are separate parts
// (splitBraces) or, where bash does not expand them, literal text.
func unquotedLit(b *wordBuilder, s string, first bool) {
	if first && strings.HasPrefix(s, "~") {
		b.opaque = true
		b.dynamic(s, true)
		return
	}
	var lit []rune
	flush := func() {
		if len(lit) > 0 {
			b.lit(string(lit))
			lit = lit[:0]
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\' && i+1 < len(rs):
			i++
			if rs[i] != '\n' {
				lit = append(lit, rs[i])
			}
		case r == '*' || r == '?':
			flush()
			b.dynamic(string(r), true)
		case r == '[' && strings.ContainsRune(string(rs[i+1:]), ']'):
			// a bracket expression is one hole, up to its ']' (a ']'
			// right after '[' or '[!' is a member, not the end)
			flush()
			end := i + 1
			if end < len(rs) && (rs[end] == '!' || rs[end] == '^') {
				end++
			}
			if end < len(rs) && rs[end] == ']' {
				end++
			}
			for end < len(rs) && rs[end] != ']' {
				end++
			}
			if end >= len(rs) {
				lit = append(lit, r) // no closing ']': a literal '['
				continue
			}
			b.dynamic(string(rs[i:end+1]), true)
			i = end
		default:
			lit = append(lit, r)
		}
	}
	flush()
}

// unescapeDouble removes the backslashes that escape inside double quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				out.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
}

// nodeText prints a node back as shell source, for display only. The
// printer can trip over odd trees the parser accepts; the text is then "?".
func nodeText(n syntax.Node) (text string) {
	defer func() {
		if recover() != nil {
			text = "?"
		}
	}()
	var buf bytes.Buffer
	if err := syntax.NewPrinter().Print(&buf, n); err != nil {
		return "?"
	}
	return buf.String()
}

// assignWord renders an assignment prefix (NAME=value) as a word.
func assignWord(a *syntax.Assign) word {
	var b wordBuilder
	if a.Name != nil {
		b.lit(a.Name.Value)
	}
	if a.Index != nil {
		b.dynamic("["+nodeText(a.Index)+"]", false)
	}
	switch {
	case a.Naked && a.Value != nil && a.Name == nil:
		return convertWord(a.Value)
	case a.Naked:
		return b.word()
	}
	if a.Append {
		b.lit("+=")
	} else {
		b.lit("=")
	}
	if a.Array != nil {
		b.dynamic(nodeText(a.Array), false)
	} else if a.Value != nil {
		for i, part := range a.Value.Parts {
			convertPart(&b, part, i == 0)
		}
	}
	return b.word()
}

// joinWords is the normalised command: words separated by one space.
func joinWords(ws []word) ([]rune, string) {
	var rs []rune
	var text strings.Builder
	for i, w := range ws {
		if i > 0 {
			rs = append(rs, ' ')
			text.WriteByte(' ')
		}
		rs = append(rs, w.runes...)
		text.WriteString(w.text)
	}
	return rs, text.String()
}
