package spec

import (
	"strings"
	"testing"
)

// TestLimitsBinaryPatchBytes: limits.binary_patch_bytes is read as bytes
// within its bounds (absent: 0, the default); out of range, or not an
// integer, is an error at the value with what to give.
func TestLimitsBinaryPatchBytes(t *testing.T) {
	const head = "version: 1\nname: t\nprompt: p\nlimits:\n"
	for text, want := range map[string]int64{
		"  max_steps: 3\n":                  0,
		"  binary_patch_bytes: 1024\n":      MinBinaryPatchBytes,
		"  binary_patch_bytes: 33554432\n":  32 << 20,
		"  binary_patch_bytes: 268435456\n": MaxBinaryPatchBytes,
	} {
		s, err := LoadBytes("t.yaml", []byte(head+text))
		if err != nil || s.Limits.BinaryPatchBytes != want {
			t.Errorf("%q: %d (%v), want %d", text, s.Limits.BinaryPatchBytes, err, want)
		}
	}
	for text, want := range map[string]string{
		"  binary_patch_bytes: 1023\n":      "t.yaml:5:23: limits.binary_patch_bytes: must be at least 1024, got 1023",
		"  binary_patch_bytes: 0\n":         "t.yaml:5:23: limits.binary_patch_bytes: must be at least 1024, got 0",
		"  binary_patch_bytes: 268435457\n": "t.yaml:5:23: limits.binary_patch_bytes: 268435457 bytes is more than a binary patch may hold (give at most 268435456, that is 256 MiB",
		"  binary_patch_bytes: 16MiB\n":     "t.yaml:5:23: limits.binary_patch_bytes: expected an integer, got a string",
		"  binary_patch_byte: 1024\n":       `t.yaml:5:3: unknown key "binary_patch_byte" in limits (did you mean "binary_patch_bytes"?)`,
	} {
		_, err := LoadBytes("t.yaml", []byte(head+text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", text, err, want)
		}
	}
}
