package gate

import (
	"fmt"
	"strings"
)

// pathsWithReasons lists paths each with the reason that denied it, paths
// of the same reason together, in the order the reasons first appear:
// "a, b (reason 1) and c (reason 2)". A path out of the tree (a symlink
// pointing out) thus carries its external_directory reason, not the rule
// of the path listed before it.
func pathsWithReasons(paths, reasons []string) string {
	var order []string
	by := map[string][]string{}
	for i, p := range paths {
		if _, ok := by[reasons[i]]; !ok {
			order = append(order, reasons[i])
		}
		by[reasons[i]] = append(by[reasons[i]], p)
	}
	parts := make([]string, len(order))
	for i, reason := range order {
		parts[i] = fmt.Sprintf("%s (%s)", strings.Join(by[reason], ", "), reason)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
