package llmtest

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"testing"
)

// PromptCache is Anthropic's prompt caching rule (platform.claude.com,
// "Prompt caching"), kept honestly so a test can measure what a request
// layout would cost:
//   - the prompt is the sequence tools, system, then each message's
//     content blocks; a prefix ends at a block with cache_control;
//   - a request reads the longest cached prefix that ends at one of its
//     breakpoints or at one of the 20 blocks before each breakpoint, and
//     only on a byte-for-byte match of the blocks (cache_control aside);
//   - it writes the prefix of each breakpoint not cached yet, unless the
//     prefix is shorter than MinTokens (1024 for Sonnet and Opus);
//   - input_tokens are the tokens after the last cache read or write.
//
// Tokens are counted as a block's JSON bytes / 4, rounded up.
type PromptCache struct {
	MinTokens int // 0: 1024
	mu        sync.Mutex
	cached    map[[32]byte]bool
}

// lookback is how many blocks before a breakpoint the cache checks.
const lookback = 20

// Usage computes a request's usage by the rule and records its writes.
func (c *PromptCache) Usage(body map[string]any) AnthropicUsage {
	blocks, marks := promptBlocks(body)
	hashes := make([][32]byte, len(blocks))
	cum := make([]int, len(blocks))
	h := sha256.New()
	total := 0
	for i, b := range blocks {
		h.Write(b)
		h.Write([]byte{0})
		copy(hashes[i][:], h.Sum(nil))
		total += (len(b) + 3) / 4
		cum[i] = total
	}
	minTokens := c.MinTokens
	if minTokens == 0 {
		minTokens = 1024
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cached == nil {
		c.cached = map[[32]byte]bool{}
	}
	read := 0
	for _, bp := range marks {
		for j := bp; j >= 0 && j >= bp-lookback; j-- {
			if c.cached[hashes[j]] {
				read = max(read, cum[j])
				break
			}
		}
	}
	written := read
	for _, bp := range marks {
		if cum[bp] < minTokens || c.cached[hashes[bp]] {
			continue
		}
		c.cached[hashes[bp]] = true
		written = max(written, cum[bp])
	}
	return AnthropicUsage{InputTokens: total - written, CacheReadInputTokens: read, CacheCreationInputTokens: written - read}
}

// promptBlocks flattens a Messages body into its cacheable blocks, each
// as canonical JSON without cache_control (a message's role and position
// are part of its first block), and the indexes of the blocks that carry
// cache_control.
func promptBlocks(body map[string]any) (blocks [][]byte, marks []int) {
	add := func(prefix string, b map[string]any) {
		if b["cache_control"] != nil {
			marks = append(marks, len(blocks))
		}
		c := make(map[string]any, len(b))
		for k, v := range b {
			if k != "cache_control" {
				c[k] = v
			}
		}
		raw, _ := json.Marshal(c) // maps: sorted keys, canonical
		blocks = append(blocks, append([]byte(prefix), raw...))
	}
	for _, key := range []string{"tools", "system"} {
		switch v := body[key].(type) {
		case []any:
			for _, b := range v {
				if bm, ok := b.(map[string]any); ok {
					add(key+":", bm)
				}
			}
		case string:
			add("system:", map[string]any{"type": "text", "text": v})
		}
	}
	list, _ := body["messages"].([]any)
	for i, m := range list {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		for j, b := range contentBlocks(mm) {
			prefix := ""
			if j == 0 {
				prefix = role + "#" + string(rune('0'+i%10)) + ":"
			}
			add(prefix, b)
		}
	}
	return blocks, marks
}

// AnthropicServer is a fake Messages endpoint: it rejects what the API
// rejects (AnthropicMessages), answers the i-th accepted request with script[i]
// and fills the usage of an AnthropicTurn's reply by the prompt caching
// rule (Cache). Usages lists what it reported, in order.
type AnthropicServer struct {
	*Server
	Cache *PromptCache
	// TokenURL is the fake Vertex's OAuth token endpoint ("" elsewhere).
	TokenURL string
	mu       sync.Mutex
	usages   []AnthropicUsage
}

// AnthropicStep is one scripted answer of an AnthropicServer: a turn, or
// a raw reply (an error, a cut stream) when Raw is set.
type AnthropicStep struct {
	Turn AnthropicTurn
	Raw  *Reply
}

// NewAnthropicServer starts the fake with its script; requests beyond it
// fail the test.
func NewAnthropicServer(t testing.TB, script ...AnthropicStep) *AnthropicServer {
	t.Helper()
	return newAnthropicServer(t, AnthropicMessages(), nil, script)
}

// newAnthropicServer starts a fake Messages endpoint behind personality p;
// frame (nil: none) rewrites every reply, as Bedrock's framing does.
func newAnthropicServer(t testing.TB, p Personality, frame func(Reply) Reply, script []AnthropicStep) *AnthropicServer {
	t.Helper()
	s := &AnthropicServer{Cache: &PromptCache{}}
	if frame == nil {
		frame = func(r Reply) Reply { return r }
	}
	s.Server = newScriptServer(t, &p, len(script), func(i int, req RecordedRequest) Reply {
		if i >= len(script) {
			return AnthropicError(400, "invalid_request_error", "llmtest: unscripted request")
		}
		if script[i].Raw != nil {
			return frame(*script[i].Raw)
		}
		turn := script[i].Turn
		u := s.Cache.Usage(req.Body)
		u.OutputTokens = turn.Usage.OutputTokens
		turn.Usage = u
		s.mu.Lock()
		s.usages = append(s.usages, u)
		s.mu.Unlock()
		return frame(turn.Reply())
	})
	return s
}

// Usages returns the usages reported so far.
func (s *AnthropicServer) Usages() []AnthropicUsage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AnthropicUsage(nil), s.usages...)
}
