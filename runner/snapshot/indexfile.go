package snapshot

import (
	"bytes"
	"encoding/binary"
)

// Index entry flag bits (git's read-cache.c).
const (
	ceExtended     = 0x4000
	ceSkipWorktree = 0x4000 // in the extended flags
	ceIntentToAdd  = 0x2000 // in the extended flags
)

// parseIndexFast reads a version 2 or 3 index without verifying its
// checksum (git verified it when writing; we only read) and calls add for
// each entry. It is several times faster than go-git's reflective
// decoder, which matters because the user's index is re-read whenever a
// command such as `git status` rewrote it. Version 4 (prefix-compressed
// paths) and split indexes return errIndexFormat.
func parseIndexFast(data []byte, add func(name string, tf trackedFile)) error {
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return errIndexFormat
	}
	version := binary.BigEndian.Uint32(data[4:])
	if version != 2 && version != 3 {
		return errIndexFormat
	}
	n := int(binary.BigEndian.Uint32(data[8:]))
	body := data[:len(data)-20]
	off := 12
	for range n {
		if off+62 > len(body) {
			return errIndexFormat
		}
		e := body[off:]
		be := binary.BigEndian
		flags := be.Uint16(e[60:])
		hdr := 62
		var ext uint16
		if flags&ceExtended != 0 {
			if version < 3 || off+64 > len(body) {
				return errIndexFormat
			}
			ext = be.Uint16(e[62:])
			hdr = 64
		}
		nameLen := int(flags & 0xfff)
		if nameLen == 0xfff {
			nameLen = bytes.IndexByte(e[hdr:], 0)
		}
		if nameLen < 0 || off+hdr+nameLen > len(body) {
			return errIndexFormat
		}
		tf := trackedFile{
			mode: be.Uint32(e[24:]),
			st: statInfo{
				ctime: int64(be.Uint32(e[0:]))*1e9 + int64(be.Uint32(e[4:])),
				mtime: int64(be.Uint32(e[8:]))*1e9 + int64(be.Uint32(e[12:])),
				ino:   be.Uint32(e[20:]),
				size:  int64(be.Uint32(e[36:])),
			},
		}
		copy(tf.hash[:], e[40:60])
		stage := int(flags>>12) & 3
		tf.seedOK = stage == 0 && ext&(ceSkipWorktree|ceIntentToAdd) == 0
		add(string(e[hdr:hdr+nameLen]), tf)
		// Entries are NUL-padded to a multiple of 8 bytes (1 to 8 NULs).
		off += (hdr + nameLen + 8) &^ 7
	}
	return checkExtensions(body[min(off, len(body)):])
}

// indexEntryCount is the entry count an index file's header states,
// bounded by what its size can hold (62 bytes an entry): a capacity hint
// that a corrupt header cannot turn into a huge allocation.
func indexEntryCount(data []byte) int {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return 0
	}
	return min(int(binary.BigEndian.Uint32(data[8:])), len(data)/62)
}

// checkExtensions refuses a split index, whose entries live in another
// file.
func checkExtensions(ext []byte) error {
	for len(ext) >= 8 {
		if string(ext[:4]) == "link" {
			return errIndexFormat
		}
		size := int(binary.BigEndian.Uint32(ext[4:]))
		if size > len(ext)-8 {
			return nil
		}
		ext = ext[8+size:]
	}
	return nil
}
