package bashcheck

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxExpanded bounds the words one command's brace expansions and known
// variable values may produce; beyond it the command is denied as too
// complex to judge.
const maxExpanded = 256

// expandWords turns command words into the words bash passes (for the
// words bash brace-expands: command words, for and select items,
// redirection targets; assignment values, [[ ]] operands and case
// patterns are not): each brace
// expansion alternative becomes its own word, and a plain $NAME whose
// values this script assigns statically stands for each value (see
// varFacts). The second result explains a denial: too many words.
func (a *analyzer) expandWords(ws []*syntax.Word) ([]word, string) {
	out := make([]word, 0, len(ws))
	for _, w := range ws {
		alts, why := a.expandWord(w)
		if why != "" {
			return nil, why
		}
		out = append(out, alts...)
		if len(out) > maxExpanded {
			return nil, fmt.Sprintf("brace expansion and variable values make more than %d words of %s, too many to judge",
				maxExpanded, nodeText(w))
		}
	}
	return out, ""
}

// expandWord is one word's alternatives (expandWords).
func (a *analyzer) expandWord(w *syntax.Word) ([]word, string) {
	braced := []*syntax.Word{w}
	via := ""
	// SplitBraces rewrites the word's parts: work on a copy, since
	// syntax.Walk does not know the BraceExp nodes it makes
	split := *w
	if syntax.SplitBraces(&split) {
		braced = braced[:0]
		for bw, err := range expand.BracesSeq(nil, &split) {
			if err != nil || len(braced) >= maxExpanded {
				return nil, fmt.Sprintf("the brace expansion %s makes more than %d words, too many to judge", nodeText(w), maxExpanded)
			}
			braced = append(braced, bw)
		}
		via = "brace expansion of " + nodeText(w)
	}
	var out []word
	for _, bw := range braced {
		bs := []*wordBuilder{{}}
		for i, part := range bw.Parts {
			bs = a.convertAlts(bs, part, i == 0)
			if len(bs) > maxExpanded {
				return nil, fmt.Sprintf("the values of the variables in %s make more than %d words, too many to judge", nodeText(w), maxExpanded)
			}
		}
		for _, b := range bs {
			cw := b.word()
			if via != "" && cw.via == "" {
				cw.via = via
			}
			// an unquoted expansion of nothing ({a,} gives "") is no word
			if via != "" && cw.text == "" && len(cw.runes) == 0 {
				continue
			}
			out = append(out, cw)
		}
	}
	return out, ""
}

// convertAlts adds part to every builder; a $NAME with known values forks
// each builder into one per value.
func (a *analyzer) convertAlts(bs []*wordBuilder, part syntax.WordPart, first bool) []*wordBuilder {
	if pe, ok := a.knownParam(part); ok {
		return a.substitute(bs, pe, false)
	}
	if dq, ok := part.(*syntax.DblQuoted); ok && a.hasKnownParam(dq) {
		for _, inner := range dq.Parts {
			if pe, ok := a.knownParam(inner); ok {
				bs = a.substitute(bs, pe, true)
				continue
			}
			for _, b := range bs {
				convertQuotedPart(b, inner)
			}
		}
		return bs
	}
	for _, b := range bs {
		convertPart(b, part, first)
	}
	return bs
}

func (a *analyzer) hasKnownParam(dq *syntax.DblQuoted) bool {
	for _, p := range dq.Parts {
		if _, ok := a.knownParam(p); ok {
			return true
		}
	}
	return false
}

// knownParam reports a plain $NAME or ${NAME} whose values are all known.
func (a *analyzer) knownParam(part syntax.WordPart) (*syntax.ParamExp, bool) {
	pe, ok := part.(*syntax.ParamExp)
	if !ok || !plainParam(pe) {
		return nil, false
	}
	if pe.Param.Value == "PWD" {
		return pe, len(a.dirs) > 0 && !a.dirs[unknownDir] && a.vars["PWD"] == nil
	}
	f := a.vars[pe.Param.Value]
	return pe, f != nil && f.unknown == "" && len(f.values) > 0
}

// plainParam reports $NAME or ${NAME}: no operator, index or length.
func plainParam(pe *syntax.ParamExp) bool {
	return pe.Param != nil && !pe.Excl && !pe.Length && !pe.Width && !pe.IsSet && pe.Index == nil &&
		pe.Slice == nil && pe.Repl == nil && pe.Exp == nil && pe.NestedParam == nil && len(pe.Modifiers) == 0
}

// substitute forks every builder into one per known value of pe.
func (a *analyzer) substitute(bs []*wordBuilder, pe *syntax.ParamExp, quoted bool) []*wordBuilder {
	f := a.vars[pe.Param.Value]
	if pe.Param.Value == "PWD" && f == nil {
		f = &varFact{origin: "the directory the command runs in"}
		for _, d := range a.dirs.sorted() {
			f.values = append(f.values, litWord(d))
		}
	}
	out := make([]*wordBuilder, 0, len(bs)*len(f.values))
	for _, b := range bs {
		for _, v := range f.values {
			nb := b.clone()
			nb.value(v, nodeText(pe), !quoted)
			nb.via = fmt.Sprintf("$%s is %s here (%s)", pe.Param.Value, displayValue(v), f.origin)
			out = append(out, nb)
		}
	}
	return out
}

func displayValue(v word) string {
	if v.text == "" {
		return "empty"
	}
	return "`" + v.text + "`"
}

// convertQuotedPart adds one part of a "…" string.
func convertQuotedPart(b *wordBuilder, inner syntax.WordPart) {
	if l, ok := inner.(*syntax.Lit); ok {
		b.lit(unescapeDouble(l.Value))
		return
	}
	b.dynamicPart(inner, false)
}

// unknownPart names an expansion whose value is text only known at run
// time (a variable, a command substitution), "" for one whose value is a
// number or a name the check can place ($#, $((…)), ${#x}, <(…), globs).
func unknownPart(part syntax.WordPart) string {
	switch p := part.(type) {
	case *syntax.CmdSubst:
		return nodeText(p)
	case *syntax.ParamExp:
		if p.Length || p.Width || p.Param == nil {
			return ""
		}
		if numericParam(p.Param.Value) && p.Exp == nil && p.Index == nil {
			return ""
		}
		if p.Param.Value == "HOME" { // placed by the path checks as ~
			return ""
		}
		return nodeText(p)
	}
	return ""
}

// numericParam reports parameters whose value is always a number.
func numericParam(name string) bool {
	switch name {
	case "#", "?", "$", "!", "RANDOM", "LINENO", "SECONDS", "BASHPID", "PPID", "UID", "EUID",
		"EPOCHSECONDS", "EPOCHREALTIME", "SRANDOM", "OPTIND", "SHLVL", "COLUMNS", "LINES", "HISTCMD":
		return true
	}
	return false
}

// clone copies a builder (forking alternatives).
func (b *wordBuilder) clone() *wordBuilder {
	nb := &wordBuilder{runes: append([]rune(nil), b.runes...), split: b.split, unknown: b.unknown,
		dec: append([]rune(nil), b.dec...), decoded: b.decoded, via: b.via, opaque: b.opaque}
	nb.text.WriteString(b.text.String())
	return nb
}

// value adds a variable's known value v (written as src): its literal
// runes, and its holes (globs) as holes.
func (b *wordBuilder) value(v word, src string, unquoted bool) {
	b.runes = append(b.runes, v.runes...)
	dec := v.pathRunes()
	b.dec = append(b.dec, dec...)
	b.decoded = b.decoded || v.decoded != nil
	b.text.WriteString(v.text)
	b.split = b.split || (unquoted && (v.split || strings.ContainsAny(v.text, " \t\n")))
	if b.unknown == "" && v.unknown != "" {
		b.unknown = v.unknown
	}
	b.opaque = b.opaque || v.opaque
	_ = src
}
