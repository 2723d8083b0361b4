package snapshot

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// packWriter appends objects to a new pack file (version 2, no deltas)
// and writes its version 2 index on finish, as git's fast-import does.
type packWriter struct {
	f       *os.File
	w       *bufio.Writer
	off     int64
	entries []packEntry
}

type packEntry struct {
	hash plumbing.Hash
	off  int64
	crc  uint32
}

func newPackWriter(objectsDir string) (*packWriter, error) {
	dir := filepath.Join(objectsDir, "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create pack dir: %w", err)
	}
	f, err := os.CreateTemp(dir, "tmp_pack_")
	if err != nil {
		return nil, fmt.Errorf("create pack: %w", err)
	}
	p := &packWriter{f: f, w: bufio.NewWriterSize(f, 256<<10)}
	p.w.Write([]byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0}) // count patched in finish
	p.off = 12
	return p, nil
}

// add appends an object whose zlib-compressed content is z and returns
// the offset of z in the pack.
func (p *packWriter) add(h plumbing.Hash, typ plumbing.ObjectType, size int64, z []byte) (int64, error) {
	var hdr [16]byte
	n := 0
	c := byte(typ)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		hdr[n] = c | 0x80
		n++
		c = byte(size & 0x7f)
		size >>= 7
	}
	hdr[n] = c
	n++
	crc := crc32.Update(crc32.ChecksumIEEE(hdr[:n]), crc32.IEEETable, z)
	p.entries = append(p.entries, packEntry{hash: h, off: p.off, crc: crc})
	if _, err := p.w.Write(hdr[:n]); err != nil {
		return 0, fmt.Errorf("write pack: %w", err)
	}
	if _, err := p.w.Write(z); err != nil {
		return 0, fmt.Errorf("write pack: %w", err)
	}
	off := p.off + int64(n)
	p.off = off + int64(len(z))
	return off, nil
}

// finish completes the pack and its index under their final names, or
// removes the temp file when no object was added.
func (p *packWriter) finish() error {
	tmp := p.f.Name()
	err := p.complete()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err != nil || len(p.entries) == 0 {
		_ = os.Remove(tmp)
		return err
	}
	sum, err := fileSHA1Trailer(tmp)
	if err != nil {
		return err
	}
	base := filepath.Join(filepath.Dir(tmp), "pack-"+hex.EncodeToString(sum))
	if err := os.Rename(tmp, base+".pack"); err != nil {
		return fmt.Errorf("finish pack: %w", err)
	}
	return writeIdx(base+".idx", p.entries, sum)
}

// complete patches the object count and appends the SHA-1 trailer.
func (p *packWriter) complete() error {
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	var cnt [4]byte
	binary.BigEndian.PutUint32(cnt[:], uint32(len(p.entries)))
	if _, err := p.f.WriteAt(cnt[:], 8); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	if _, err := p.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	d := sha1.New()
	if _, err := io.Copy(d, p.f); err != nil {
		return fmt.Errorf("hash pack: %w", err)
	}
	if _, err := p.f.Write(d.Sum(nil)); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	return nil
}

// fileSHA1Trailer returns the last 20 bytes of a file.
func fileSHA1Trailer(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read pack: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read pack: %w", err)
	}
	sum := make([]byte, 20)
	if _, err := f.ReadAt(sum, fi.Size()-20); err != nil {
		return nil, fmt.Errorf("read pack: %w", err)
	}
	return sum, nil
}

// writeIdx writes a version 2 pack index.
func writeIdx(path string, entries []packEntry, packSum []byte) error {
	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].hash[:], entries[j].hash[:]) < 0 })
	var b bytes.Buffer
	b.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	var scratch [8]byte // big-endian integers on their way into b
	for _, e := range entries {
		fan[e.hash[0]]++
	}
	var total uint32
	for i := range fan {
		total += fan[i]
		b.Write(binary.BigEndian.AppendUint32(scratch[:0], total))
	}
	for _, e := range entries {
		b.Write(e.hash[:])
	}
	for _, e := range entries {
		b.Write(binary.BigEndian.AppendUint32(scratch[:0], e.crc))
	}
	var large []int64
	for _, e := range entries {
		if e.off < 1<<31 {
			b.Write(binary.BigEndian.AppendUint32(scratch[:0], uint32(e.off)))
			continue
		}
		b.Write(binary.BigEndian.AppendUint32(scratch[:0], uint32(1<<31|len(large))))
		large = append(large, e.off)
	}
	for _, off := range large {
		b.Write(binary.BigEndian.AppendUint64(scratch[:0], uint64(off)))
	}
	b.Write(packSum)
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o444); err != nil {
		return fmt.Errorf("write pack index: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write pack index: %w", err)
	}
	return nil
}

// readIdxHashes lists the object ids in a version 2 pack index.
func readIdxHashes(path string) ([]plumbing.Hash, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) < 8+1024 || !bytes.Equal(data[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return nil, fmt.Errorf("%s: unsupported pack index", path)
	}
	n := int(binary.BigEndian.Uint32(data[8+255*4:]))
	if len(data) < 8+1024+n*20 {
		return nil, fmt.Errorf("%s: truncated pack index", path)
	}
	out := make([]plumbing.Hash, n)
	for i := range out {
		copy(out[i][:], data[8+1024+i*20:])
	}
	return out, nil
}

// storeLimit is the largest object a step (not a full Track) stores
// without compression: a step writes few and small objects, and building
// a deflate block's codes for a 60-byte blob cost more CPU than the rest
// of writing it.
const storeLimit = 64 << 10

// compress returns the zlib stream of an object's content: deflated at
// the best speed, or in stored blocks (level 0) when small is set.
func (s *objectStore) compress(data []byte, small bool) []byte {
	var b bytes.Buffer
	b.Grow(len(data)/2 + 64)
	pool, level := &s.zpool, zlib.BestSpeed
	if small {
		b.Grow(len(data) + 64)
		pool, level = &s.zstore, zlib.NoCompression
	}
	zw, _ := pool.Get().(*zlib.Writer)
	if zw == nil {
		zw, _ = zlib.NewWriterLevel(&b, level)
	} else {
		zw.Reset(&b)
	}
	_, _ = zw.Write(data) // into a bytes.Buffer: it cannot fail
	zw.Close()
	pool.Put(zw)
	return b.Bytes()
}
