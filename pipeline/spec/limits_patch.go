package spec

import "gopkg.in/yaml.v3"

// Bounds of "limits.binary_patch_bytes". Below MinBinaryPatchBytes a
// patch could carry hardly any binary file, and a run that changes one
// would fail for nothing; above MaxBinaryPatchBytes a file's literal, in
// base85, would make a patch too large to review, attach or post. A large
// binary patch is streamed: memory stays bounded whatever the limit.
const (
	MinBinaryPatchBytes = 1 << 10   // 1 KiB
	MaxBinaryPatchBytes = 256 << 20 // 256 MiB
)

// binaryPatchBytes decodes "limits.binary_patch_bytes": an integer number
// of bytes within [MinBinaryPatchBytes, MaxBinaryPatchBytes]; 0 after an
// error.
func (d *Decoder) binaryPatchBytes(path string, n *yaml.Node) int64 {
	v := d.Integer(path, n, MinBinaryPatchBytes)
	if v > MaxBinaryPatchBytes {
		d.ErrorAt(n, "give at most 268435456, that is 256 MiB; leave it out for the default 16777216, 16 MiB",
			"%s: %d bytes is more than a binary patch may hold", path, v)
		return 0
	}
	return v
}
