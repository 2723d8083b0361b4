package snapshot

import (
	"bytes"
	"strconv"
)

// renderHunks formats a line diff as unified hunks with ctx lines of
// context, merging hunks whose context would touch, as git does. Lines
// without a final newline get git's "\ No newline at end of file" marker.
// It returns nil when ops hold no change, so no empty hunk is written.
func renderHunks(ops []lineOp, ctx int) []byte {
	// oldBefore[i] and newBefore[i]: lines of each side before ops[i].
	oldBefore := make([]int, len(ops)+1)
	newBefore := make([]int, len(ops)+1)
	for i, o := range ops {
		oldBefore[i+1], newBefore[i+1] = oldBefore[i], newBefore[i]
		if o.kind != '+' {
			oldBefore[i+1]++
		}
		if o.kind != '-' {
			newBefore[i+1]++
		}
	}
	var b bytes.Buffer
	for i := 0; i < len(ops); {
		c := i
		for c < len(ops) && ops[c].kind == ' ' {
			c++
		}
		if c == len(ops) {
			break
		}
		start := max(0, c-ctx)
		last := c
		for j := c; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				last = j
			} else if j-last > 2*ctx {
				break
			}
		}
		end := min(len(ops), last+ctx+1)
		b.WriteString("@@ -")
		writeRange(&b, oldBefore[start], oldBefore[end]-oldBefore[start])
		b.WriteString(" +")
		writeRange(&b, newBefore[start], newBefore[end]-newBefore[start])
		b.WriteString(" @@\n")
		for _, o := range ops[start:end] {
			b.WriteByte(o.kind)
			b.WriteString(o.text)
			if len(o.text) == 0 || o.text[len(o.text)-1] != '\n' {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return b.Bytes()
}

// writeRange writes a hunk range: the first line and the count, the count
// left out when 1, and the line before the hunk when the count is 0.
func writeRange(b *bytes.Buffer, before, count int) {
	first := before
	if count > 0 {
		first++
	}
	b.WriteString(strconv.Itoa(first))
	if count != 1 {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(count))
	}
}

// quotePath quotes a path the way git does with core.quotePath on (the
// default): in double quotes with C escapes when it holds a control
// character, '"', '\\', DEL or a byte >= 0x80 (written in octal).
func quotePath(p string) string {
	need := false
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			need = true
			break
		}
	}
	if !need {
		return p
	}
	var b bytes.Buffer
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 || c >= 0x7f {
				b.WriteByte('\\')
				b.WriteByte('0' + c>>6)
				b.WriteByte('0' + c>>3&7)
				b.WriteByte('0' + c&7)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
