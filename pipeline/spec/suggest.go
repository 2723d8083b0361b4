package spec

import (
	"fmt"
	"strings"
)

// unknownKeyHint suggests the closest known key, or lists them all.
func unknownKeyHint(key string, known []string) string {
	if s := suggest(key, known); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return "known keys: " + strings.Join(known, ", ")
}

// suggest returns the candidate closest to word by edit distance, or "" when
// none is close enough to be a likely typo.
func suggest(word string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		if len(word) >= 3 && strings.HasPrefix(strings.ToLower(c), strings.ToLower(word)) {
			return c
		}
		dist := editDistance(strings.ToLower(word), strings.ToLower(c))
		if bestDist < 0 || dist < bestDist {
			best, bestDist = c, dist
		}
	}
	limit := max(2, len([]rune(word))/3)
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
