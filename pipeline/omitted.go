package pipeline

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/seed43ef5acb/runner/pipeline/spec"

	"github.com/seed43ef5acb/runner/runner/snapshot"
)

// binaryPatchLimit is the run's binary patch limit in bytes: the spec's
// limits.binary_patch_bytes, else snapshot.DefaultMaxBinaryPatch.
func (r *execRun) binaryPatchLimit() int64 {
	return cmp.Or(r.spec.Limits.BinaryPatchBytes, snapshot.DefaultMaxBinaryPatch)
}

// omittedFiles returns the changes the final patch leaves out (a binary
// side over the run's binary patch limit).
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
func omittedMessage(files []snapshot.FileChange, limit int64) string {
	om := omittedFiles(files)
	names := make([]string, 0, len(om))
	for _, f := range om {
		blob := "new blob " + f.Omitted.NewBlob
		switch {
		case f.Omitted.NewBlob == "" && f.Omitted.NewSize > 0:
			blob = "not read: larger than " + snapshot.SizeText(snapshot.UnhashedLimit)
		case f.Omitted.NewBlob == "":
			blob = "deleted"
		}
		names = append(names, fmt.Sprintf("%s (%d → %d bytes, %s)", f.Path, f.Omitted.OldSize, f.Omitted.NewSize, blob))
	}
	return fmt.Sprintf("the patch leaves out %d binary change(s) larger than the binary patch limit of %s: %s; "+
		"the patch applies without them, so take those files from the work tree the run left (not kept with --isolate), "+
		"or raise limits.binary_patch_bytes (at most %d)",
		len(om), snapshot.SizeText(limit), strings.Join(names, ", "), spec.MaxBinaryPatchBytes)
}
