package pipeline

import (
	"fmt"
	"strings"
)

// ParseInputs turns --set KEY=VALUE flags into a map. A flag without "=",
// with an empty key, or for a key an earlier flag already set is an error
// wrapping ErrUsage (a silent "last one wins" hides typos in scripts).
func ParseInputs(set []string) (map[string]string, error) {
	out := make(map[string]string, len(set))
	for _, kv := range set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%w: --set %q: write KEY=VALUE", ErrUsage, kv)
		}
		if prev, dup := out[k]; dup {
			return nil, fmt.Errorf("%w: --set %s is given twice (%q and %q); give each input once",
				ErrUsage, k, prev, v)
		}
		out[k] = v
	}
	return out, nil
}
