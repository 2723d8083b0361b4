package bashcheck

import (
	"strings"
)

// GNU sed's script language runs and writes as well as edits: the e
// command and the s///e flag run a shell command, w, W and s///w write a
// file, r and R read one. Source: the GNU sed manual, "sed scripts".

// sedScripts returns the scripts of a sed command (-e values, --expression
// values, else the first operand) and a reason when one cannot be known
// (-f FILE, a script only known at run time).
func sedScripts(args []word) ([]string, string) {
	var scripts []string
	var operand *word
	fromOptions := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		s := a.lit()
		switch {
		case !a.static() && operand == nil && !fromOptions:
			return nil, "the sed script " + a.text + " is only known at run time"
		case !a.static() || !strings.HasPrefix(s, "-") || s == "-":
			if operand == nil {
				operand = &args[i]
			}
		case s == "-e" || s == "--expression":
			if i+1 < len(args) {
				i++
				if !args[i].static() {
					return nil, "the sed script " + args[i].text + " is only known at run time"
				}
				scripts, fromOptions = append(scripts, args[i].lit()), true
			}
		case strings.HasPrefix(s, "--expression="):
			scripts, fromOptions = append(scripts, strings.TrimPrefix(s, "--expression=")), true
		case s == "-f" || strings.HasPrefix(s, "--file") || len(s) > 2 && s[1] != '-' && strings.ContainsRune(s, 'f') && !strings.ContainsRune(s[:strings.IndexRune(s, 'f')], 'e'):
			return nil, "sed " + s + " reads its script from a file, which cannot be judged"
		case len(s) > 2 && s[1] != '-' && strings.ContainsRune(s, 'e'):
			at := strings.IndexRune(s, 'e')
			if rest := s[at+1:]; rest != "" {
				scripts, fromOptions = append(scripts, rest), true
			} else if i+1 < len(args) {
				i++
				scripts, fromOptions = append(scripts, args[i].lit()), true
			}
		case s == "-l" || s == "--line-length":
			i++
		}
	}
	if !fromOptions && operand != nil {
		scripts = append(scripts, operand.lit())
	}
	return scripts, ""
}

// sedProblem explains why a sed script cannot be judged: it runs a
// command or reads or writes a file the check does not see; "" otherwise.
// The scan is conservative: text it cannot place is taken as commands.
func sedProblem(script string) string {
	p := sedParser{s: script}
	for p.i < len(p.s) {
		if why := p.command(); why != "" {
			return why
		}
	}
	return ""
}

type sedParser struct {
	s string
	i int
}

// command reads one command with its addresses.
func (p *sedParser) command() string {
	p.skip(" \t\n;")
	p.address()
	if p.i < len(p.s) && p.s[p.i] == ',' {
		p.i++
		p.skip(" \t")
		p.address()
	}
	p.skip(" \t!")
	if p.i >= len(p.s) {
		return ""
	}
	c := p.s[p.i]
	p.i++
	switch c {
	case 'e':
		return "the sed command e runs a shell command, which cannot be judged"
	case 'w', 'W':
		return "the sed command " + string(c) + " writes a file, which cannot be judged"
	case 'r', 'R':
		return "the sed command " + string(c) + " reads a file, which cannot be judged"
	case 's':
		return p.substitute()
	case 'y':
		if d, ok := p.delim(); ok {
			p.until(d)
			p.until(d)
		}
	case 'a', 'i', 'c', '#':
		p.untilAny("\n") // text or a comment, to the end of the line
	case ':', 'b', 't', 'T', 'v':
		p.untilAny(";\n") // a label ends at ';' in GNU sed: what follows is judged
	case '{', '}':
		// a block's first command follows '{' at once (1{e cmd)
	case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'q', 'Q', 'x', 'z', 'F', 'L':
		p.untilAny(";\n}")
	default:
		return "the sed script has a command (" + string(c) + ") the check does not know"
	}
	return ""
}

// substitute reads s/RE/REPL/FLAGS and refuses the e and w flags.
func (p *sedParser) substitute() string {
	d, ok := p.delim()
	if !ok {
		return "the sed s command has no delimiter"
	}
	p.until(d)
	p.until(d)
	start := p.i
	p.untilAny(";\n}")
	flags := p.s[start:p.i]
	switch {
	case strings.ContainsRune(flags, 'e'):
		return "the sed flag s///e runs the pattern space as a shell command, which cannot be judged"
	case strings.ContainsRune(flags, 'w'):
		return "the sed flag s///w writes a file, which cannot be judged"
	}
	return ""
}

// address skips a line number, $, /RE/, \cREc or first~step (with + and ~ forms).
func (p *sedParser) address() {
	switch {
	case p.i >= len(p.s):
	case p.s[p.i] == '/':
		p.i++
		p.until('/')
		p.skip("IM")
	case p.s[p.i] == '\\' && p.i+1 < len(p.s):
		d := p.s[p.i+1]
		p.i += 2
		p.until(d)
		p.skip("IM")
	default:
		p.skip("0123456789$~+")
	}
}

func (p *sedParser) delim() (byte, bool) {
	if p.i >= len(p.s) || p.s[p.i] == '\n' || p.s[p.i] == '\\' {
		return 0, false
	}
	d := p.s[p.i]
	p.i++
	return d, true
}

// until moves past the next unescaped d.
func (p *sedParser) until(d byte) {
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\' && p.i < len(p.s):
			p.i++
		case c == d:
			return
		}
	}
}

func (p *sedParser) untilAny(set string) {
	for p.i < len(p.s) && !strings.ContainsRune(set, rune(p.s[p.i])) {
		p.i++
	}
}

func (p *sedParser) skip(set string) {
	for p.i < len(p.s) && strings.ContainsRune(set, rune(p.s[p.i])) {
		p.i++
	}
}
