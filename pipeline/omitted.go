package pipeline

import (
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// omittedFiles returns the changes the final patch leaves out (a binary
// side over snapshot.DefaultMaxBinaryPatch).
func omittedFiles(files []snapshot.FileChange) []snapshot.FileChange {
	var out []snapshot.FileChange
	for _, f := range files {
		if f.Omitted != nil {
			out = append(out, f)
		}
	}
	return out
}

// omittedMessage is run.finished's error message for a patch that leaves
// changes out: a run whose patch cannot carry its changes is not a
// success, since whoever applies the patch would lose them silently.
func omittedMessage(files []snapshot.FileChange) string {
	om := omittedFiles(files)
	names := make([]string, 0, len(om))
	for _, f := range om {
		names = append(names, fmt.Sprintf("%s (%d → %d bytes, new blob %s)", f.Path, f.Omitted.OldSize, f.Omitted.NewSize,
			f.Omitted.NewBlob))
	}
	return fmt.Sprintf("the patch leaves out %d binary change(s) larger than the %d MiB binary patch limit: %s; "+
		"the patch applies without them, so take those files from the work tree the run left (not kept with --isolate)",
		len(om), snapshot.DefaultMaxBinaryPatch>>20, strings.Join(names, ", "))
}
