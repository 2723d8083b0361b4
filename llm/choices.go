package llm

// counterConfirm is how far a never-recurring index must climb before it
// is taken for a chunk counter without waiting for the end of the stream:
// interleaved n>1 streams recur within n chunks, so n up to 4 stay apart.
const counterConfirm = 4

// choicePicker selects the choices of a stream that make up the one reply
// the runner asked for (n = 1):
//   - the reply is the first index seen (0 nearly always);
//   - when indices recur (0, 1, 0, 1), a proxy asked for n > 1: other
//     indices are other replies and are dropped (LiteLLM, n=2);
//   - when every chunk has a new, higher index (0, 1, 2, …), the index
//     counts chunks (Foundry Local): all of them are the reply.
//
// Until the two can be told apart, choices at a new index are held back;
// they are released as the reply once the index climbs counterConfirm
// past the first, or a finish_reason or the end of the stream comes first.
type choicePicker struct {
	started bool
	base    int64 // index of the reply
	last    int64 // highest index seen
	mode    pickMode
	held    []choice
}

type pickMode int

const (
	pickUndecided pickMode = iota
	pickMulti              // indices recur: keep base only
	pickCounter            // indices count chunks: keep all
)

// pick returns the choices of c to read now, in order: held choices
// released by this chunk come first.
func (p *choicePicker) pick(choices []choice) []choice {
	if len(choices) == 0 {
		return nil
	}
	if len(choices) > 1 && p.mode == pickUndecided {
		p.mode, p.held = pickMulti, nil // several choices in one chunk: n > 1
		if !p.started {
			p.started, p.base = true, lowestIndex(choices)
			p.last = p.base
		}
	}
	var out []choice
	for _, ch := range choices {
		out = append(out, p.one(ch)...)
	}
	return out
}

func (p *choicePicker) one(ch choice) []choice {
	idx := int64(0)
	if ch.Index != nil {
		idx = int64(*ch.Index)
	}
	if !p.started {
		p.started, p.base, p.last = true, idx, idx
		return []choice{ch}
	}
	switch p.mode {
	case pickCounter:
		return []choice{ch}
	case pickMulti:
		if idx == p.base {
			return []choice{ch}
		}
		return nil
	}
	if idx <= p.last { // an index recurs: other choices are other replies
		p.mode, p.held = pickMulti, nil
		if idx == p.base {
			return []choice{ch}
		}
		return nil
	}
	p.last = idx
	p.held = append(p.held, ch)
	if idx-p.base >= counterConfirm || ch.FinishReason != "" {
		return p.release()
	}
	return nil
}

// release takes the held choices as the reply (the index counts chunks).
func (p *choicePicker) release() []choice {
	p.mode = pickCounter
	out := p.held
	p.held = nil
	return out
}

// flush releases choices still held when the stream ends: with no index
// recurring, they were chunks of the reply.
func (p *choicePicker) flush() []choice {
	if len(p.held) == 0 {
		return nil
	}
	return p.release()
}

// lowestIndex is the smallest index among choices (a missing one is 0).
func lowestIndex(choices []choice) int64 {
	low := int64(-1)
	for _, ch := range choices {
		idx := int64(0)
		if ch.Index != nil {
			idx = int64(*ch.Index)
		}
		if low < 0 || idx < low {
			low = idx
		}
	}
	return low
}
