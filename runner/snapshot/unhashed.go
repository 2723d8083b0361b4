package snapshot

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/seed43ef5acb/runner/runner/event"
)

// UnhashedLimit is the largest regular file (bytes) a snapshot reads.
// A larger one is never part of a patch (it is over every binary patch
// limit: 256 MiB is the most limits.binary_patch_bytes allows), so
// reading it would only tell whether it changed, at the cost of its
// whole size: `truncate -s 1T f` takes no disk but hours to hash. Such a
// file gets unhashedID of its stat instead, and a change of it is
// omitted from the patch (patch_incomplete) like any change over the
// limit.
const UnhashedLimit = 256 << 20

// NotRead reports that the new side of an omitted change is a file over
// UnhashedLimit, which the snapshot did not read: whoever reads it after
// the run (a secret scan, a copy) takes as long as its size, for a file
// that is not part of the patch.
func NotRead(o *event.Omitted) bool {
	return o != nil && o.NewBlob == "" && o.NewSize > UnhashedLimit
}

// unhashedMagic starts every unhashed id. A real blob id starting with
// these 6 bytes has a chance of 2^-48.
var unhashedMagic = [6]byte{0xff, 'r', 'u', 'n', 0xff, 0x00}

// unhashedID stands for the content of a file larger than UnhashedLimit:
// the magic, the size (8 bytes, big-endian) and 6 bytes of the SHA-1 of
// its stat (size, mtime, ctime, inode), so a file whose stat changes gets
// a new id (a touch counts as a change: its content is not known) and the
// size can be read back from the id alone (unhashedSize), in this run or
// a later one that reuses the stat cache. No object has this id.
func unhashedID(st statInfo) plumbing.Hash {
	var h plumbing.Hash
	copy(h[:6], unhashedMagic[:])
	binary.BigEndian.PutUint64(h[6:14], uint64(st.size))
	d := sha1.Sum(fmt.Appendf(nil, "%d %d %d %d", st.size, st.mtime, st.ctime, st.ino))
	copy(h[14:], d[:6])
	return h
}

// unhashedSize returns the size an unhashedID carries; ok is false for
// any other id.
func unhashedSize(h plumbing.Hash) (int64, bool) {
	if [6]byte(h[:6]) != unhashedMagic {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(h[6:14])), true
}
