package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Name limits (see the package doc).
const (
	// MaxToolName is the longest tool name providers take (OpenAI,
	// Anthropic, Gemini: ^[a-zA-Z0-9_-]{1,64}$).
	MaxToolName = 64
	namePrefix  = "mcp__"
	nameSep     = "__"
	hashLen     = 8
)

// ToolName is the name the model sees for tool on server (see the package
// doc for the rule). It always matches ^[a-zA-Z0-9_-]{1,64}$ and depends on
// nothing but its two arguments.
func ToolName(server, tool string) string {
	plain := namePrefix + server + nameSep + tool
	if len(plain) <= MaxToolName && tool != "" && safeName(server) && safeName(tool) &&
		!strings.Contains(server, nameSep) && !strings.HasSuffix(server, "_") {
		return plain
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	hash := "_" + hex.EncodeToString(sum[:])[:hashLen]
	s, t := sanitize(server), sanitize(tool)
	room := MaxToolName - len(namePrefix) - len(nameSep) - len(hash)
	// Share the room: the server keeps up to half, the tool the rest.
	if len(s)+len(t) > room {
		maxS := max(room/2, room-len(t))
		s = s[:min(len(s), maxS)]
		t = t[:min(len(t), room-len(s))]
	}
	return namePrefix + s + nameSep + t + hash
}

// safeName reports whether s is made of [a-zA-Z0-9_-] only.
func safeName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// sanitize replaces every byte outside [a-zA-Z0-9_-] with '_' (a multi-byte
// rune becomes several '_').
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

// ValidServerName reports whether name may name a server in the spec:
// letters, digits, '-' and '_', 1 to 32 bytes.
func ValidServerName(name string) bool {
	return name != "" && len(name) <= MaxServerName && safeName(name)
}

// MaxServerName is the longest server name the spec takes, so that a plain
// tool name keeps at least 25 bytes for the tool.
const MaxServerName = 32
