package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

var providerName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	long := strings.Repeat("t", 70)
	tests := []struct{ server, tool, want string }{
		{"github", "get_me", "mcp__github__get_me"},
		{"docs-1", "search-docs", "mcp__docs-1__search-docs"},
		{"github", "get.me", "mcp__github__get_me_" + hash("github", "get.me")},
		{"a__b", "c", "mcp__a__b__c_" + hash("a__b", "c")},
		{"a_", "b", "mcp__a___b_" + hash("a_", "b")},
		{"a", "_b", "mcp__a___b"},
		{"srv", long, "mcp__srv__" + strings.Repeat("t", 45) + "_" + hash("srv", long)},
		{"srv", "", "mcp__srv___" + hash("srv", "")},
		{"s", "名前", "mcp__s_________" + hash("s", "名前")},
	}
	for _, tt := range tests {
		got := ToolName(tt.server, tt.tool)
		if got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
		if !providerName.MatchString(got) {
			t.Errorf("ToolName(%q, %q) = %q breaks the provider rule", tt.server, tt.tool, got)
		}
	}
}

// hash is the first 8 hex digits of SHA-256("SERVER\x00TOOL").
func hash(server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return hex.EncodeToString(sum[:4])
}

// TestToolNamesDoNotCollide checks the rule on the pairs most likely to
// collide: names built from the separator and its neighbours, and long
// names that share a prefix.
func TestToolNamesDoNotCollide(t *testing.T) {
	parts := []string{"a", "b", "_", "__", "a_", "_a", "a__b", "a_b", "-", ".", "a.b", "a b",
		strings.Repeat("x", 60), strings.Repeat("x", 60) + "y", strings.Repeat("x", 60) + "z"}
	seen := map[string]string{}
	for _, s := range parts {
		if !ValidServerName(s) {
			continue
		}
		for _, tl := range parts {
			name := ToolName(s, tl)
			key := fmt.Sprintf("%q/%q", s, tl)
			if !providerName.MatchString(name) {
				t.Errorf("%s → %q breaks the provider rule", key, name)
			}
			if prev, ok := seen[name]; ok {
				t.Errorf("%s and %s are both %q", prev, key, name)
			}
			seen[name] = key
		}
	}
	if len(seen) < 50 {
		t.Fatalf("only %d names checked", len(seen))
	}
}

func FuzzToolName(f *testing.F) {
	f.Add("github", "get_me", "github", "get.me")
	f.Add("a__b", "c", "a", "b__c")
	f.Fuzz(func(t *testing.T, s1, t1, s2, t2 string) {
		if !ValidServerName(s1) || !ValidServerName(s2) || s1 == s2 && t1 == t2 {
			return
		}
		n1, n2 := ToolName(s1, t1), ToolName(s2, t2)
		if !providerName.MatchString(n1) || !providerName.MatchString(n2) {
			t.Fatalf("bad names %q, %q", n1, n2)
		}
		if n1 == n2 {
			t.Fatalf("%q/%q and %q/%q are both %q", s1, t1, s2, t2, n1)
		}
	})
}
