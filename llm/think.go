package llm

import "strings"

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// thinkState is where a thinkSplitter stands in the content.
type thinkState int

const (
	thinkLeading thinkState = iota // before the first non-space content: a <think> may open
	thinkInside                    // inside the leading think block
	thinkAfter                     // past it, or no block: everything is text
)

// segment is a piece of content classified as reasoning or text.
type segment struct {
	reasoning bool
	text      string
}

// thinkSplitter moves a leading <think>…</think> block of the content into
// reasoning. Reasoning models served without a reasoning parser put their
// chain of thought there: DeepSeek-R1 on vLLM without --reasoning-parser,
// Qwen3 and QwQ on Ollama and llama.cpp (--reasoning-format none), Groq
// with reasoning_format "raw" (Groq reasoning docs). The tags may arrive
// split across deltas ("<th", "ink>"), so a piece that could still become
// a tag is held back until the next delta decides it. Only a block that
// opens the content counts; "<think>" later in an answer is text.
type thinkSplitter struct {
	state  thinkState
	held   string // content held back: possibly the start of a tag
	trimNL bool   // a tag just ended: drop the line breaks that follow it
}

// passing reports whether all further content is text (the splitter has
// nothing to hold or strip), so the caller may skip feed.
func (t *thinkSplitter) passing() bool {
	return t.state == thinkAfter && t.held == "" && !t.trimNL
}

// feed classifies the next content delta.
func (t *thinkSplitter) feed(s string) []segment {
	s = t.held + s
	t.held = ""
	var out []segment
	for s != "" {
		if t.trimNL { // line breaks right after a tag belong to the tag
			if s = strings.TrimLeft(s, "\r\n"); s == "" {
				break
			}
			t.trimNL = false
		}
		switch t.state {
		case thinkLeading:
			trimmed := strings.TrimLeft(s, " \t\r\n")
			switch {
			case strings.HasPrefix(trimmed, thinkOpen):
				t.state, t.trimNL, s = thinkInside, true, trimmed[len(thinkOpen):]
			case trimmed == "" || strings.HasPrefix(thinkOpen, trimmed):
				t.held, s = s, "" // whitespace, or a tag begun: wait
			default:
				t.state = thinkAfter
			}
		case thinkInside:
			if i := strings.Index(s, thinkClose); i >= 0 {
				out = appendSegment(out, true, s[:i])
				t.state, t.trimNL, s = thinkAfter, true, s[i+len(thinkClose):]
				continue
			}
			keep := partialSuffix(s, thinkClose)
			out = appendSegment(out, true, s[:len(s)-keep])
			t.held, s = s[len(s)-keep:], ""
		case thinkAfter:
			out, s = appendSegment(out, false, s), ""
		}
	}
	return out
}

// flush returns what is held back when the content ends: held leading
// text is text, a held piece inside the block is reasoning.
func (t *thinkSplitter) flush() []segment {
	held := t.held
	t.held = ""
	if t.state == thinkInside {
		return appendSegment(nil, true, held)
	}
	return appendSegment(nil, false, held)
}

func appendSegment(out []segment, reasoning bool, s string) []segment {
	if s == "" {
		return out
	}
	return append(out, segment{reasoning: reasoning, text: s})
}

// partialSuffix returns the length of the longest proper suffix of s that
// is a prefix of tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
